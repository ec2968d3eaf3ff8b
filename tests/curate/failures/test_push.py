"""add-failures --push against a real argilla-server: only the new items go, production's retrieved chunks
among their candidates, and no planted personal data reaches Argilla."""

import uuid

from curate.dataset.batches import FailureBatches
from tests.curate.failures.conftest import PLANTED
from tests.curate.failures.test_add import assert_nothing_planted
from tests.support.argilla import owner_client


def test_push_sends_the_new_items_with_what_production_retrieved(production, argilla_env):
    curate, log = production
    space = "f" + uuid.uuid4().hex[:8]
    result = curate("add-failures", log, "--dataset", "faq", "--month", "2026-11", "--push", "--pool-k", "4",
                    "--argilla-workspace", space)
    batch = FailureBatches(curate.workspace, "faq").all()[0]
    assert f"pushed {len(batch.added)} new items to Argilla dataset 'faq'" in result.stdout
    client = owner_client(argilla_env)
    records = {str(r.id): r for d in client.workspaces(space).datasets
               for r in client.datasets(name=d.name, workspace=space).records(with_suggestions=True)}
    assert sorted(records) == sorted(batch.added)          # neither the leak nor the handbook's own items
    upgrade = next(r for r in records.values() if r.fields["question"].startswith("升级网关"))
    assert upgrade.fields["question"] == "升级网关要多久？我的手机[PHONE]"
    assert "`upgrade.en.md#0`" in upgrade.fields["chunk_1"].split("\n")[0]   # what production retrieved comes first
    assert upgrade.metadata["source"] == "production" and upgrade.metadata["status"] == "needs_evidence"
    sent = " ".join(str(v) for r in records.values() for v in [*r.fields.values(), *r.metadata.values()])
    assert not [value for value in PLANTED if value in sent]
    assert_nothing_planted(curate.workspace.root, result.stdout, result.stderr)
