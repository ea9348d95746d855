"""Fingerprints that bind a human review to exactly what was reviewed."""

import hashlib
import json


def fingerprint(claim_id: str, claim_text: str, citation_id: str, source_content: str) -> str:
    """Return the SHA-256 hex digest identifying one reviewed (claim, cited source) pair.

    Contract: the digest is taken over the UTF-8 bytes of the canonical JSON object
    ``{"citation_id", "claim_id", "claim_text", "source_content"}`` serialized with sorted
    keys, no whitespace (``separators=(",", ":")``) and ``ensure_ascii=False``. The result is
    64 lowercase hex characters. Any change to any of the four strings changes the digest,
    which is how a stored review is recognised as stale. It is the same value seed 000's
    ``reviews.json`` files store, so those files keep verifying.

    The fingerprint identifies content; it is not a signature and proves nothing about who
    reviewed it. A string holding a lone surrogate cannot be encoded as UTF-8 and raises
    ``UnicodeEncodeError``.

    >>> fingerprint("C1", "The API returned HTTP 200.", "S1", "log: GET /health -> 200")
    '0fb32f7a164b108097c4a6560bba1f8395118da70b1078eea98e1264a3c4f5d0'
    """
    target = {
        "claim_id": claim_id,
        "claim_text": claim_text,
        "citation_id": citation_id,
        "source_content": source_content,
    }
    payload = json.dumps(target, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()
