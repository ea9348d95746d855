"""Step 2, judge: the `Judge` and its strategies (`judge`), the words asked (`prompts`), numbers read
off answers (`answers`), the call cache (`cache`), request deadlines (`deadline`) and the offline
llama.cpp backend (`localmodel`, `llamaserver`)."""
