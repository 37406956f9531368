"""The site's search, one concern per module: Korean words in the index and in a query
(``korean``, with its browser twin ``korean_stemmer.js``), the ranked search for a pasted
error message (``ranked``: its data, error-index.js, and ``static/ranked-search.js``, which
the search page's template loads), and search from disk (``file_search``)."""
