# %% [markdown]
# # Tuning the auto-accept threshold
#
# A verdict at or above the threshold stands without a human; the rest go to review. Where to put
# it depends on how often the model is right when it is confident. This notebook measures that on a
# labelled set (46 citations over RFC 7519 and RFC 6749, each with a gold verdict) from the recorded
# answers: moving the threshold re-routes stored results and never calls the model.

# %% tags=["parameters"]
LABELLED = [("rfc7519.txt", "../data/eval_rfc7519.json"), ("rfc6749.txt", "../data/eval_rfc6749.json")]
THRESHOLD = 0.8
TARGET = 0.95  # accuracy the verdicts that stand must reach
CACHE_MODE = "replay"
MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"

# %%
import matplotlib.pyplot as plt
import pandas as pd

import citeaudit as ca

judge = ca.Judge(model=MODEL, cache=ca.CallCache(mode=CACHE_MODE))
table = pd.concat([ca.audit_quotes(source, cites, judge=judge, threshold=THRESHOLD).table
                   for source, cites in LABELLED], ignore_index=True)
print(f"{len(table)} labelled citations; gold verdicts:", table["expected"].map(str).value_counts().to_dict())

# %% [markdown]
# ## Try it
#
# Move the slider: the summary, the plots and the table follow. Red rows are wrong verdicts that
# would stand at that threshold.

# %%
explorer = ca.ThresholdExplorer(table, THRESHOLD)
explorer.widget()

# %% [markdown]
# ## The same, as static output
#
# Every threshold on a 0.05 grid: how many verdicts stand, how many of them are right, how many go
# to review and how many wrong ones would stand.

# %%
grid = ca.threshold_table(table)
grid.style.format({"threshold": "{:.2f}", "auto_share": "{:.0%}", "auto_accuracy": "{:.0%}"})

# %%
fig = explorer.figure()
plt.show()

# %%
advice = ca.advise(table, TARGET)
print(f"expected calibration error: {advice.ece:.3f}")
print(advice.statement)

# %% [markdown]
# ## Reading it
#
# The recorded model is Qwen2.5-Coder-1.5B on two CPU cores. Its confidence does carry some signal
# (the reliability diagram rises with confidence), but it is overconfident at the bottom and its
# verdicts rarely reach high confidence at all. So a threshold that keeps the verdicts that stand
# accurate sends almost every model verdict to review: with this judge, the threshold protects the
# answer, and the human does most of the judging. A stronger judge moves the curve up and to the
# right.

# %%
ca.style_threshold_view(explorer.view(THRESHOLD))
