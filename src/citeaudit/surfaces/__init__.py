"""What people see: the command line (`cli`), tables and JSON Lines (`views`), the HTML report
(`report`) and dashboard (`dashboard`), notebook widgets (`widgets`) and figures (`plots`). Surfaces
import the pipeline; nothing in the pipeline imports a surface."""
