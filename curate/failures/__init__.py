"""The monthly regression flow: questions production failed on join the regression split
(`curate add-failures`): failure rules (`rules`), personal data masked (`pii`), production logs read
as a stream (`log`), batches recorded (`batches`), and the flow itself (`add`).

Nothing is imported here: `curate.release` reads the batches, and the flow uses the release's checks.
"""
