"""The errors page: every error and warning message the site's runs print, grouped in the
families that docs/errors.rst writes as prose (``error_families``), each message with the
pages that show it and its wordings on other torch releases (``error_index``), and the
ranked search's data it writes for the search page (search/ranked.py)."""
