"""The monthly regression flow: questions production failed on join the regression split
(`curate add-failures`): failure rules (`rules`), personal data masked (`pii`), production logs read
as a stream (`log`), the flow's pure core (`core`: rows in, items and a batch record out) and the
flow in a workspace (`add`). The batch records are the dataset's (`curate.dataset.batches`): a release
reads them without importing this package.
"""
