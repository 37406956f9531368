/*
 * The query side of korean.py (see its docstring for the rules): the
 * stemmer Sphinx's searchtools.js calls on each query word, and a bigram
 * fallback for query words that are not indexed words. korean.py puts
 * this in language_data.js after Sphinx's EnglishStemmer and the word lists
 * (KOREAN_PARTICLES, KOREAN_ENDINGS, KOREAN_SYNONYMS, KOREAN_MIN_STEM, KOREAN_BIGRAM).
 */
var KoreanStemmer = function () {
  const english = new EnglishStemmer();
  const hangulWord = /^[\uac00-\ud7a3]+$/;
  const strip = (word, suffixes) => {
    for (const suffix of suffixes) {
      if (word.endsWith(suffix)) {
        const stem = word.slice(0, -suffix.length);
        return stem.length >= KOREAN_MIN_STEM ? stem : word;
      }
    }
    return word;
  };

  this.stemWord = (word) => {
    if (!hangulWord.test(word)) return english.stemWord(word.toLowerCase());
    const stem = strip(strip(word, KOREAN_PARTICLES), KOREAN_ENDINGS);
    return Object.hasOwn(KOREAN_SYNONYMS, stem) ? KOREAN_SYNONYMS[stem] : stem;
  };
};
var Stemmer = KoreanStemmer;

/* korean.bigrams */
var koreanBigrams = (text) => {
  const out = [];
  for (let i = 0; i < Math.max(1, text.length - 1); i++) out.push(KOREAN_BIGRAM + text.slice(i, i + 2));
  return out;
};

/*
 * The ways a query word's syllables can be covered by bigrams the index has: each a list
 * of bigrams from its first syllable to its last, a step of one or two syllables at a
 * time (a step of two skips a pair the page need not hold: 산그 in 연산그래프, where the
 * reader left out a space). A page holds the word when it holds every bigram of one way;
 * no way, when some syllable is in no indexed pair. At most 32 ways, shortest first.
 */
var koreanBigramWays = (term, index) => {
  const grams = koreanBigrams(term);
  const has = (gram) => Object.hasOwn(index.terms, gram) || Object.hasOwn(index.titleterms, gram);
  if (grams.length === 1) return has(grams[0]) ? [grams] : [];
  const ways = [];
  const walk = (i, way) => {
    if (ways.length >= 32 || !has(grams[i])) return;
    if (i === grams.length - 1) return void ways.push([...way, grams[i]]);
    for (const step of [2, 1]) if (i + step < grams.length) walk(i + step, [...way, grams[i]]);
  };
  walk(0, []);
  return ways.sort((a, b) => a.length - b.length);
};

/*
 * On the search page (searchtools.js is loaded first there): a Hangul query word
 * that is neither a word nor a title word of the index is looked up by its
 * bigrams (koreanBigramWays): the pages that hold every bigram of one way; those
 * pages come after the pages found by words, below the score of a partial match and
 * in the order of their own scores (a page whose title holds the bigrams first).
 *
 * Every Hangul word of the query must be on a page too: searchtools.js lets a
 * page miss any query word of fewer than 3 characters (English "a", "of"), which
 * made a query of 2-syllable words (버전 카운터) an OR. The pages that hold every
 * Hangul word (by itself, or by its bigrams when it is not an indexed word)
 * and every other word searchtools.js requires come first; a page missing some
 * is kept, below all of them, in the order of the share of the words it holds.
 */
if (typeof Search !== "undefined" && Search.performTermsSearch) {
  const hangul = /^[\uac00-\ud7a3]+$/;
  const bySphinx = Search.performTermsSearch;
  const byWords = (terms, excluded) => koreanTitlesFirst(bySphinx(terms, excluded), terms, Search._index);
  Search.performTermsSearch = (searchTerms, excludedTerms) => {
    const results = byWords(searchTerms, excludedTerms);
    const index = Search._index;
    const known = (term) => Object.hasOwn(index.terms, term) || Object.hasOwn(index.titleterms, term);
    // each query, the words with each unindexed Hangul word replaced by one way of its bigrams
    let queries = [[]];
    let fallback = false;
    for (const term of searchTerms) {
      if (hangul.test(term) && !known(term)) {
        const ways = koreanBigramWays(term, index);
        fallback = true;
        if (!ways.length) queries = [];
        queries = queries.flatMap((query) => ways.map((way) => [...query, ...way])).slice(0, 64);
      } else queries = queries.map((query) => [...query, term]);
    }
    let all = results;
    if (fallback) {
      const found = new Set(results.map((result) => result[0]));
      const byBigrams = new Map();
      for (const query of queries)
        for (const result of byWords(new Set(query), excludedTerms))
          if (!found.has(result[0]) && !(byBigrams.get(result[0])?.[4] >= result[4])) byBigrams.set(result[0], result);
      byBigrams.forEach((result) => (result[4] = (Scorer.partialTerm * result[4]) / (result[4] + 1)));
      all = results.concat([...byBigrams.values()]);
    }
    return koreanEveryWordFirst(all, searchTerms, index);
  };
}

/* The files (numbers) that hold a term as searchtools.js finds it: exactly, or, for a
 * term of 3+ characters that is not an indexed word, inside an indexed word. */
var koreanFilesWith = (term, index) => {
  const files = new Set();
  for (const table of [index.terms, index.titleterms]) {
    const add = (found) => (typeof found === "number" ? [found] : found).forEach((f) => files.add(f));
    if (Object.hasOwn(table, term)) add(table[term]);
    else if (term.length > 2) for (const key of Object.keys(table)) if (key.includes(term)) add(table[key]);
  }
  return files;
};

/* results, those on pages that hold every required query word first (see above). */
var koreanEveryWordFirst = (results, searchTerms, index) => {
  const hangul = /^[\uac00-\ud7a3]+$/;
  const terms = [...searchTerms];
  if (terms.length < 2 || !terms.some((term) => hangul.test(term))) return results;
  // Per required word, the files that hold it; a Hangul word that is not indexed, by all its bigrams.
  const holders = [];
  for (const term of terms) {
    if (!hangul.test(term) && term.length < 3) continue; // as searchtools.js: not required
    let files = koreanFilesWith(term, index);
    if (hangul.test(term) && !files.size)
      for (const way of koreanBigramWays(term, index)) {
        const grams = way.map((gram) => koreanFilesWith(gram, index));
        grams[0].forEach((file) => grams.every((gram) => gram.has(file)) && files.add(file));
      }
    holders.push(files);
  }
  const share = (result) => {
    const file = index.docnames.indexOf(result[0]);
    return holders.filter((files) => files.has(file)).length / holders.length;
  };
  const full = [];
  const part = [];
  for (const result of results) (share(result) === 1 ? full : part).push(result);
  if (!full.length || !part.length) return results;
  const floor = Math.min(...full.map((result) => result[4]));
  part.forEach((result) => (result[4] = (floor * share(result)) / 2)); // below every page with all the words
  return full.concat(part);
};

/* The terms a title holds, as the index stems it: each word stemmed, the one-syllable stem
 * of a word whose rest is a particle (뷰를 → 뷰), and the bigrams of its Hangul words. */
var koreanTitleTerms = (title) => {
  const stemmer = (koreanTitleTerms.stemmer ||= new Stemmer());
  const out = new Set();
  for (const word of splitQuery(title)) {
    out.add(stemmer.stemWord(word.toLowerCase()));
    if (/^[\uac00-\ud7a3]+$/.test(word)) {
      if (word.length >= 2 && KOREAN_PARTICLES.includes(word.slice(1))) out.add(word[0]);
      if (word.length > 1) koreanBigrams(word).forEach((gram) => out.add(gram));
    }
  }
  return out;
};

/*
 * results, each page's score raised by less than 1 for the query words in its titles:
 * searchtools.js scores a page by its best word alone (15 for a word in any of its
 * titles, 5 in its text) and orders equal scores by title, so a page whose own title
 * names the word sat below pages that name it in one section title, or, for a word every
 * page holds, anywhere. Each query word counts 1 in the page's title, 1/2 in one of its
 * section titles only (Sphinx's alltitles); the raise is 0.9 times their mean, so it
 * only orders pages searchtools.js scores the same.
 */
var koreanTitlesFirst = (results, searchTerms, index) => {
  const terms = [...searchTerms];
  if (!terms.length || !results.length) return results;
  if (koreanTitlesFirst.index !== index) {
    // per file, the terms of its own title and of its section titles; once per index
    koreanTitlesFirst.index = index;
    koreanTitlesFirst.own = index.titles.map((title) => koreanTitleTerms(title || ""));
    koreanTitlesFirst.sections = index.titles.map(() => new Set());
    for (const [title, found] of Object.entries(index.alltitles || {}))
      for (const [file, id] of found)
        if (id !== null) koreanTitleTerms(title).forEach((term) => koreanTitlesFirst.sections[file].add(term));
  }
  const { own, sections } = koreanTitlesFirst;
  for (const result of results) {
    const file = index.docnames.indexOf(result[0]);
    if (file < 0) continue;
    const weight = terms.reduce(
      (sum, term) => sum + (own[file].has(term) ? 1 : sections[file].has(term) ? 0.5 : 0),
      0,
    );
    result[4] += (0.9 * weight) / terms.length;
  }
  return results;
};
