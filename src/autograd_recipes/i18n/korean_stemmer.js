/*
 * The query side of korean_search.py (see its docstring for the rules): the
 * stemmer Sphinx's searchtools.js calls on each query word, and a bigram
 * fallback for query words that are not indexed words. korean_search.py puts
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

/* korean_search.bigrams */
var koreanBigrams = (text) => {
  const out = [];
  for (let i = 0; i < Math.max(1, text.length - 1); i++) out.push(KOREAN_BIGRAM + text.slice(i, i + 2));
  return out;
};

/*
 * On the search page (searchtools.js is loaded first there): a Hangul query word
 * that is neither a word nor a title word of the index is replaced by its
 * bigrams, which must all be on a page; those pages come after the pages found
 * by words, below the score of a partial match and in the order of their own
 * scores (a page whose title holds the bigrams first).
 */
if (typeof Search !== "undefined" && Search.performTermsSearch) {
  const byWords = Search.performTermsSearch;
  Search.performTermsSearch = (searchTerms, excludedTerms) => {
    const results = byWords(searchTerms, excludedTerms);
    const index = Search._index;
    const known = (term) => Object.hasOwn(index.terms, term) || Object.hasOwn(index.titleterms, term);
    const expanded = new Set();
    let fallback = false;
    for (const term of searchTerms) {
      if (/^[\uac00-\ud7a3]+$/.test(term) && !known(term)) {
        koreanBigrams(term).forEach((gram) => expanded.add(gram));
        fallback = true;
      } else expanded.add(term);
    }
    if (!fallback) return results;
    const found = new Set(results.map((result) => result[0]));
    const byBigrams = byWords(expanded, excludedTerms).filter((result) => !found.has(result[0]));
    byBigrams.forEach((result) => (result[4] = (Scorer.partialTerm * result[4]) / (result[4] + 1)));
    return results.concat(byBigrams);
  };
}
