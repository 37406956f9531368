"""The languages: the switch, translated interface strings, the catalog checks, Korean search and glosses."""
