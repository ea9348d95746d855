"""Step 2, judge: the `Judge` (`judge`), the ways of asking it, one object per strategy registered by
name (`strategies`), the words asked (`prompts`), numbers read off answers (`answers`), the call
cache (`cache`), request deadlines (`deadline`) and the offline llama.cpp backend (`localmodel`,
`llamaserver`)."""
