# %% [markdown]
# # The acceptance contract for source-id answers
#
# An answer made of claims, each citing a source by id, is accepted only when every claim has a
# current human review that found it supported. A review is bound to what the reviewer saw by a
# fingerprint: the SHA-256 of the claim id, the claim text, the cited source id and the source
# content. This notebook starts from an accepted answer and breaks it three ways.

# %% tags=["parameters"]
CONTRACT_DIR = "data/contract"  # answer.json, sources.json, reviews.json

# %%
import copy
import json
from pathlib import Path

import pandas as pd

import citeaudit as ca
from citeaudit import decide, pipeline, settings, surfaces

contract_dir = settings.find_input(CONTRACT_DIR)
if not contract_dir.is_dir():
    raise ca.InputError(f"CONTRACT_DIR {CONTRACT_DIR!r} is not a folder (looked in {Path.cwd()} and "
                        f"{settings.project_dir()}); set it to the folder holding answer.json, sources.json, "
                        "reviews.json.")
answer, sources, reviews = (json.loads((contract_dir / f"{name}.json").read_text(encoding="utf-8"))
                            for name in ("answer", "sources", "reviews"))


def show(title: str, answer: object, sources: object, reviews: object) -> None:
    decision = pipeline.check_contract(answer, sources, reviews)
    print(f"{title}: {decision.status}")
    for reason in decision.reasons:
        print("   -", reason)


# %% [markdown]
# ## 1. As recorded: ACCEPT
#
# The stored fingerprint is recomputed from the claim and its source and matches.

# %%
claim = answer["claims"][0]
source = next(s for s in sources["sources"] if s["id"] == claim["citation_id"])
review = next((r for r in reviews["reviews"] if r["claim_id"] == claim["id"]), {"fingerprint": None})
print("stored  ", review["fingerprint"])
print("computed", decide.fingerprint(claim["id"], claim["text"], claim["citation_id"], source["content"]))
show("as recorded", answer, sources, reviews)

# %% [markdown]
# ## 2. The review removed: REVIEW
#
# Nothing is wrong, but no human has confirmed the claim yet.

# %%
no_review: dict[str, list] = {"reviews": []}
show("review removed", answer, sources, no_review)

# %% [markdown]
# ## 3. The verdict flipped to unsupported: REJECT
#
# A current review that found the claim unsupported rejects the whole answer.

# %%
flipped = copy.deepcopy(reviews)
for stored in flipped["reviews"][:1]:
    stored["verdict"] = "unsupported"  # the seed's reviews.json says supported / unsupported
show("verdict flipped", answer, sources, flipped)

# %% [markdown]
# ## 4. The source edited after review: stale, REVIEW
#
# The review was of different content; its fingerprint no longer matches, so it counts as no
# review.

# %%
edited = copy.deepcopy(sources)
edited["sources"][0]["content"] += " (edited)"
show("source edited", answer, edited, reviews)

# %% [markdown]
# ## Malformed input: REJECT with the record named

# %%
bad = copy.deepcopy(answer)
bad["claims"][0]["citation_id"] = "S9"
show("unknown source", bad, sources, reviews)

# %% [markdown]
# The same store format serves the other citation formats: `citeaudit review` appends a review
# bound to the evidence a row shows, and `citeaudit audit --reviews` / `citeaudit lines --reviews`
# apply it. The seed's `reviews.json` reads as such a store:

# %%
surfaces.styled(pd.DataFrame([review.model_dump() for review in ca.load_reviews(contract_dir / "reviews.json")]))

# %% [markdown]
# ## Next
#
# - From a shell: `citeaudit contract data/contract/answer.json data/contract/sources.json
#   data/contract/reviews.json` prints the same decision (`--judge` also asks the model about claims
#   nobody has reviewed yet).
# - Record reviews for quote citations one by one: notebook `05_review_queue`.
