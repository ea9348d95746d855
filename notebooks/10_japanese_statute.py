# %% [markdown]
# # 日本語の回答を法令で監査する（個人情報保護法）
#
# 個人情報の保護に関する法律（APPI）について LLM が書いた日本語の回答を、その引用（条・項・号と引用文）
# ごとに確かめます。法令は e-Gov 法令 XML のまま読み込み、条・項・号をそれぞれ引用先として扱います。
# 引用の書き方は回答によってまちまちです（第27条第1項、第十七条第二項、23条、同条第1項、Article 27(2)）。
# 引用文が法令にない引用は、モデルに尋ねるまでもなく `fabricated`（捏造）になります。
# 引用文はあっても引用先が違う引用（別の条や、同じ条の別の項）は `section_mismatch` として人の確認に回ります。
# 残りの引用は、判定モデル（ローカルの Qwen2.5-Coder-1.5B）が「支持・矛盾・無関係」のどれかを確率つきで答え、
# 記録済みの回答を再生します（API キーもネットワークも不要）。
#
# 法令本文：e-Gov 法令 API（デジタル庁）、`../shared/data/ja/`（同フォルダの README を参照）。

# %% tags=["parameters"]
SOURCE = "appi-act-57-2003.egov.xml"  # ../shared/data/ja/ beside the checkout, found by name
CITATIONS = "data/ja/appi_answer_citations.json"
THRESHOLD = None  # None: the model's calibrated threshold (or CITEAUDIT_THRESHOLD); else 0 to 1
CACHE_MODE = None  # None: CITEAUDIT_CACHE_MODE, else replay (recorded answers only, no network)
MODEL = None  # None: CITEAUDIT_MODEL, else the recorded Qwen judge

# %%
import pandas as pd

import citeaudit as ca
from citeaudit import settings, surfaces

options = ca.AuditOptions.from_env(model=MODEL, cache_mode=CACHE_MODE, threshold=THRESHOLD)
print(ca.AuditRun(options).routing.note())

# %% [markdown]
# ## 法令の条・項・号
#
# 条ごと、項ごと、号ごとに引用先（セクション）ができます。番号は算用数字で表し（第27条第1項第1号）、
# 条見出しがタイトルになります。附則の条は本則と別に数えます（附則第1条）。

# %%
act = ca.load_document(SOURCE)
articles = [sid for sid in act.sections if "項" not in sid and "号" not in sid]
print(f"{act.name}: {len(act.sections)} 箇所（条 {len(articles)}、項と号を含む）")
pd.DataFrame([{"引用先": sid, "見出し": act.sections[sid].title, "本文（冒頭）": act.sections[sid].text[:60]}
              for sid in ("第27条", "第27条第1項", "第27条第1項第1号", "第27条第2項")])

# %% [markdown]
# ## 手順1：引用文を探す
#
# 漢数字と算用数字（第二十条／第20条）、全角と半角、かぎ括弧の違い、改行は、引用文を探すときに区別しません。
# 引用先に引用文がなければ、まずその条の中を、次に法令全体を探します。

# %%
located = ca.audit_quotes(act, settings.find_input(CITATIONS), options=options, locate_only=True)
surfaces.audit_view(located)

# %% [markdown]
# ## 手順2〜4：判定モデルの答え、確信度による振り分け、回答全体の判断
#
# 判定モデルは、引用された項や号を、その条全体とともに読みます（号だけでは意味をなさないため）。
# 確信度がしきい値に届かない判定、引用先の食い違い、捏造は人の確認に回ります。

# %%
audit = ca.audit_quotes(act, settings.find_input(CITATIONS), options=options)
view = surfaces.audit_view(audit)
view[["citation", "quote", "P(pass)", "score", "verdict", "route", "flags", "expected"]]

# %%
print(audit.decision.status)
for reason in audit.decision.reasons:
    print("-", reason)

# %%
right = (audit.table["verdict"] == audit.table["expected"]).sum()
print(f"期待どおりの判定: {right} / {len(audit.table)}")

# %% [markdown]
# ## Next
#
# - 同じ監査をシェルから：`citeaudit audit --source appi-act-57-2003.egov.xml --citations
#   data/ja/appi_answer_citations.json`（`--locate-only` で手順1だけ）。
# - 判定モデルが日本語をどこまで読めるか（JSICK）：`python tools/bench_japanese.py`。
