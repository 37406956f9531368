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
 *
 * Many pages show the same kind of message (the version error, with another node's name on
 * each), so the words alone rank them alike. The errors page's entries (error-index.js:
 * each message with its wording on each torch release, and the pages that show it) decide:
 * the entry whose wording the query holds the largest (rarity-weighted) share of, at least
 * RANKED_SHARE, puts its pages first. A pasted message holds all of its own entry's words
 * but the shapes and numbers, while another entry's node name or hint is missing from it.
 *
 * Within that entry's family (the errors page's groups), the node the message names
 * ("output 0 of ReluBackward0": torch 2.13 prints "Relu", older releases "ReluBackward0"
 * or "ReluBackward") picks the family's situation that lists it, and that situation's pages
 * come first (those whose run printed that node, then those that show a tensor of as many
 * dimensions, then the rest), the situation's sentence shown beside each as the reason. A message that
 * names no node (a leaf tensor) takes the situation for messages with none, its pages that
 * show a tensor of as many dimensions as the pasted one first. The claims page and the
 * errors page list messages rather than explain them: they come first only for a message
 * no other page shows.
 */
var RANKED_MIN_WORDS = 4;
var RANKED_SHARE = 0.6;

var RANKED_MESSAGE = /\b[A-Za-z_][\w.]*(?:Error|Warning|Exception): /g;
var RANKED_QUERY = ""; // the query as read (from its last exception's name on)
// the node a message names, without its "Backward0"; the dimensions of the tensor it names
var RANKED_NODE = /\boutput \d+ of ([A-Za-z][A-Za-z0-9]*?)(?:Backward\d*)?\b/i;
var RANKED_SHAPE = /\[torch\.[\w.]+ \[([\d, ]*)\]\]/;

if (typeof Search !== "undefined" && Search._parseQuery) {
  const parseQuery = Search._parseQuery;
  Search._parseQuery = (query) => {
    const names = [...query.matchAll(RANKED_MESSAGE)];
    RANKED_QUERY = names.length ? query.slice(names[names.length - 1].index) : query;
    return parseQuery(RANKED_QUERY);
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
    const errorPages = pastedMessagePages(searchTerms, (word) => Math.log(1 + pages / Math.max(1, pagesWith(word).size)));
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
    errorPages.forEach(([doc, why], place) => {
      const file = index.docnames.indexOf(doc);
      if (file < 0) return;
      // above any page found by its words alone (a page's score is at most Scorer.title
      // per word matched), in the order the errors page gives
      const score = Scorer.title * (searchTerms.size + 1) + errorPages.length - place;
      const found = results.find((result) => result[5] === index.filenames[file]);
      if (found) {
        found[4] = Math.max(found[4], score);
        found[3] = why || found[3];
      } else results.push([doc, index.titles[file], "", why, score, index.filenames[file], SearchResultKind.text]);
    });
    return results;
  };
}

// The words of a text as the search reads a query's (Sphinx's splitQuery, stop words and stemmer)
function rankedTerms(text) {
  const stemmer = new Stemmer();
  const terms = new Set();
  for (const word of splitQuery(text.trim())) {
    const lower = word.toLowerCase();
    if (stopwords.has(lower) || /^\d+$/.test(lower)) continue;
    const stem = stemmer.stemWord(lower);
    if (stem && stem[0] !== "-") terms.add(stem);
  }
  return terms;
}

// [[docname, why]]: the pages that explain the message the query is a copy of, first
// first: those of the errors page's entry (or entries, tied) whose wording the query holds
// the largest share of (at least RANKED_SHARE) of the entry's weighted words, ordered by the
// situation of the entry's family that the message's node (or its lack of one) names.
// ERROR_INDEX (error-index.js): {words, pages, entries: [[pages], [[words] per wording],
// family], families: [{situations: [[nodes or null, pages, why]], ranks: {page: [rank]},
// shown: {node: [page]}}]}
function pastedMessagePages(searchTerms, weight) {
  if (typeof ERROR_INDEX === "undefined") return [];
  const index = ERROR_INDEX;
  index.terms = index.terms || index.words.map((word) => [...rankedTerms(word)][0]);
  let best = 0;
  let tied = [];
  for (const entry of index.entries) {
    for (const wording of entry[1]) {
      let held = 0;
      let all = 0;
      for (const term of new Set(wording.map((i) => index.terms[i]).filter(Boolean))) {
        const w = weight(term);
        all += w;
        if (searchTerms.has(term)) held += w;
      }
      const share = all ? held / all : 0;
      if (share > best + 1e-9) {
        best = share;
        tied = [entry];
      } else if (Math.abs(share - best) <= 1e-9 && !tied.includes(entry)) tied.push(entry);
    }
  }
  if (best < RANKED_SHARE) return [];
  const pages = [];
  const add = (i, why) => {
    const doc = index.pages[i];
    if (!pages.some(([page]) => page === doc)) pages.push([doc, why]);
  };
  const family = (index.families || [])[tied[0][2]];
  if (family && family.situations.length) {
    const named = RANKED_QUERY.match(RANKED_NODE);
    const node = named ? named[1].toLowerCase() : null;
    const situation = family.situations.find(([nodes]) => (node ? nodes && nodes.includes(node) : nodes === null));
    if (situation) {
      const [, docs, why] = situation;
      const shape = RANKED_QUERY.match(RANKED_SHAPE);
      const rank = shape ? shape[1].split(",").filter((d) => d.trim()).length : null;
      const sameRank = (i) => (family.ranks[i] || []).includes(rank);
      const shown = named ? named[0] : "";
      const reason = shown ? `${shown}: ${why}` : why;
      ((node && family.shown[node]) || []).forEach((i) => add(i, reason));
      docs.filter(sameRank).forEach((i) => add(i, reason));
      docs.forEach((i) => add(i, reason));
    }
  }
  tied.forEach((entry) => entry[0].forEach((i) => add(i, null)));
  return pages;
}
