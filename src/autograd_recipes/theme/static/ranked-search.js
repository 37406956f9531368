/*
 * Ranked search, for a pasted error message (the search page only; templates/search.html
 * loads it after searchtools.js and language_data.js).
 *
 * Sphinx's full-text search lists the pages that have every query word. A pasted message
 * carries words no page has (its shapes, a node name of another torch release, the
 * reader's own variable names), so it found nothing. When a query has RANKED_MIN_WORDS
 * words or more, the pages that have most of them are listed too, below the pages that
 * have all: each query word the index knows weighs by how rare it is (log(1 + pages /
 * pages with the word)); a page is listed when it has at least RANKED_SHARE of the
 * weight, scored by its share (at most Scorer.term, the score of a page with every word).
 * Words the index does not know weigh nothing, so they cannot hide the page.
 *
 * A query that holds an exception's or a warning's name and message (a pasted traceback:
 * file paths, code lines, then "RuntimeError: ...") is read from its last such name on:
 * the traceback's words are the reader's files, not the problem.
 */
var RANKED_MIN_WORDS = 4;
var RANKED_SHARE = 0.6;

var RANKED_MESSAGE = /\b[A-Za-z_][\w.]*(?:Error|Warning|Exception): /g;

if (typeof Search !== "undefined" && Search._parseQuery) {
  const parseQuery = Search._parseQuery;
  Search._parseQuery = (query) => {
    const names = [...query.matchAll(RANKED_MESSAGE)];
    return parseQuery(names.length ? query.slice(names[names.length - 1].index) : query);
  };
}

if (typeof Search !== "undefined" && Search.performTermsSearch) {
  const everyWord = Search.performTermsSearch;
  Search.performEveryWordSearch = everyWord; // Sphinx's own, kept: the tests' control
  Search.performTermsSearch = (searchTerms, excludedTerms) => {
    const results = everyWord(searchTerms, excludedTerms);
    if (searchTerms.size < RANKED_MIN_WORDS) return results;
    const index = Search._index;
    const pages = index.filenames.length;
    const pagesWith = (word) => {
      const found = new Set();
      for (const table of [index.terms, index.titleterms]) {
        if (!Object.hasOwn(table, word)) continue;
        const files = table[word];
        (typeof files === "number" ? [files] : files).forEach((file) => found.add(file));
      }
      return found;
    };
    const weightOf = new Map();
    let total = 0;
    for (const word of searchTerms) {
      const files = pagesWith(word);
      if (!files.size) continue;
      const weight = Math.log(1 + pages / files.size);
      total += weight;
      files.forEach((file) => weightOf.set(file, (weightOf.get(file) || 0) + weight));
    }
    if (!total) return results;
    const listed = new Set(results.map((result) => result[5]));
    for (const [file, weight] of weightOf) {
      const share = weight / total;
      if (share < RANKED_SHARE || listed.has(index.filenames[file])) continue;
      results.push([
        index.docnames[file],
        index.titles[file],
        "",
        null,
        Scorer.term * share,
        index.filenames[file],
        SearchResultKind.text,
      ]);
    }
    return results;
  };
}
