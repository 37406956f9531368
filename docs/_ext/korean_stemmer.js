/*
 * Korean query stemmer for Sphinx's searchtools.js; mirrors korean_search.py.
 * korean_search.py puts it in language_data.js after Sphinx's EnglishStemmer
 * and the KOREAN_PARTICLES (longest first) and KOREAN_MIN_STEM values.
 */
var KoreanStemmer = function () {
  const english = new EnglishStemmer();
  const hangulWord = /^[\uac00-\ud7a3]+$/;

  this.stemWord = (word) => {
    if (!hangulWord.test(word)) return english.stemWord(word.toLowerCase());
    for (const particle of KOREAN_PARTICLES) {
      if (word.endsWith(particle)) {
        const stem = word.slice(0, -particle.length);
        return stem.length >= KOREAN_MIN_STEM ? stem : word;
      }
    }
    return word;
  };
};
var Stemmer = KoreanStemmer;
