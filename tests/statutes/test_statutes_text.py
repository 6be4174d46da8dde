from __future__ import annotations

import unicodedata

from blindmcq.statutes.corpus import Provision
from blindmcq.statutes.text import Analyzer, Lemmatizer, TextConfig, fold_for_search, tokenize

# Constitution of Ukraine, art. 3, first sentence, as in the corpus (typographic apostrophe).
ART3 = (
    "Людина, її життя і здоров’я, честь і гідність, недоторканність і безпека визнаються "
    "в Україні найвищою соціальною цінністю."
)


def test_normalise_unifies_apostrophes_case_soft_hyphen_and_nfc() -> None:
    variants = ["здоровʼя", "здоров’я", "здоров'я", "здоров`я", "здоров‘я"]
    assert {fold_for_search(v) for v in variants} == {"здоров'я"}
    assert fold_for_search("МИТ\u00adНИЙ Кодекс") == "митний кодекс"
    decomposed = unicodedata.normalize("NFD", "Їжак")
    assert decomposed != "Їжак"
    assert fold_for_search(decomposed) == "їжак"


def test_tokenize_real_sentence() -> None:
    assert tokenize(ART3) == [
        "людина", "її", "життя", "і", "здоров'я", "честь", "і", "гідність", "недоторканність",
        "і", "безпека", "визнаються", "в", "україні", "найвищою", "соціальною", "цінністю",
    ]  # fmt: skip


def test_tokenize_splits_hyphens_keeps_digits_and_inner_apostrophes_only() -> None:
    assert tokenize("будь-який закон № 1700-VII від 14.10.2014") == [
        "будь", "який", "закон", "1700", "vii", "від", "14", "10", "2014",
    ]  # fmt: skip
    assert tokenize("'п'ять' ґудзиків, її та є") == ["п'ять", "ґудзиків", "її", "та", "є"]


def test_lemmas_of_real_sentences(lemmatizer: Lemmatizer) -> None:
    analyze = Analyzer(lemmatizer=lemmatizer)
    terms = analyze(ART3)
    assert terms[0] == "людина"  # not the adjective reading "людин" that pymorphy3 lists first
    assert "здоров'я" in terms  # typographic apostrophe normalised, dictionary form found
    for form, lemma in [("Україні", "україна"), ("соціальною", "соціальний"), ("цінністю", "цінність")]:
        assert lemmatizer.lemma(fold_for_search(form)) == lemma
        assert lemma in terms
    customs = analyze("Митні органи здійснюють митний контроль товарів, що переміщуються через митний кордон")
    assert customs[:6] == ["митний", "орган", "здійснювати", "митний", "контроль", "товар"]
    assert customs[-2:] == ["митний", "кордон"]


def test_lemmas_on_a_constitution_provision(
    default_provisions: list[Provision], lemmatizer: Lemmatizer
) -> None:
    art5 = next(p for p in default_provisions if p.act == "ua-law-254-96" and p.ref == "art5")
    terms = set(Analyzer(lemmatizer=lemmatizer)(art5.document))
    assert {"народ", "влада", "орган", "державний", "суверенітет", "україна", "республіка"} <= terms
    assert "народом" not in terms and "влади" not in terms


def test_cache_computes_each_distinct_word_once(lemmatizer: Lemmatizer) -> None:
    fresh = Lemmatizer()
    uncached, computed = fresh.lemma_uncached, []

    def counting(word: str) -> str:
        computed.append(word)
        return uncached(word)

    fresh.lemma_uncached = counting  # type: ignore[method-assign]
    words = tokenize(ART3) * 3
    lemmas = fresh.lemmas(words)
    assert sorted(computed) == sorted(set(words))
    assert lemmas == [uncached(w) for w in words]
    assert lemmas == lemmatizer.lemmas(words)


def test_digits_pass_through_and_stopwords_are_optional(lemmatizer: Lemmatizer) -> None:
    text = "Стаття 5 і в Україні"
    assert Analyzer(lemmatizer=lemmatizer)(text) == ["стаття", "5", "і", "в", "україна"]
    with_stop = Analyzer(TextConfig(stopwords=True), lemmatizer)
    assert with_stop(text) == ["стаття", "5", "україна"]
    assert Analyzer(TextConfig(lemmatize=False))(text) == ["стаття", "5", "і", "в", "україні"]
