"""Running the recipes and notebooks: in-process guards, the kernel's plumbing, the outputs' cache key, the report of what ran."""
