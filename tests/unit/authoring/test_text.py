"""The text rules under framing: third-person rewriting, sentences, signature phrases."""

from __future__ import annotations

import pytest

from services.authoring.core import choose_signature, signature_in, split_sentences, third_person


def team(text: str, *, named: bool = False) -> str:
    return third_person(text, name="The Architect", group="the team", named=named)


def kyle(text: str, *, named: bool = False) -> str:
    return third_person(
        text,
        name="Kyle",
        group="Kyle and company",
        group_singular=False,
        listener="the companion",
        named=named,
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I prefer tea", "Kyle prefers tea"),
        ("i think so", "Kyle thinks so"),
        ("I really like it", "Kyle really likes it"),
        ("I also want to go", "Kyle also wants to go"),
        ("I am tired", "Kyle is tired"),
        ("I'm tired", "Kyle is tired"),
        ("I’m tired", "Kyle is tired"),
        ("I've been busy", "Kyle has been busy"),
        ("I'd like to go", "Kyle would like to go"),
        ("I'll be there", "Kyle will be there"),
        ("I have a dog", "Kyle has a dog"),
        ("I do not care", "Kyle does not care"),
        ("I don't care", "Kyle doesn't care"),
        ("I go running", "Kyle goes running"),
        ("I try hard", "Kyle tries hard"),
        ("I watch films", "Kyle watches films"),
        ("I need rest", "Kyle needs rest"),
        ("I wanted rest", "Kyle wanted rest"),
        ("I went home", "Kyle went home"),
        ("i sold the old refractor", "Kyle sold the old refractor"),
        # chat without apostrophes, and its contracted verbs
        ("Im 15 and im behind", "Kyle is 15 and Kyle is behind"),
        ("ive been doing this 9 years", "Kyle has been doing this 9 years"),
        ("i wanna know before the show", "Kyle wants to know before the show"),
        ("i gotta go", "Kyle has to go"),
        ("i dont care", "Kyle doesn't care"),
        ("i cant eat heavy food", "Kyle can't eat heavy food"),
        ("i havent slept", "Kyle hasn't slept"),
        ("we wont go", "Kyle and company won't go"),
        ("we wanna go", "Kyle and company want to go"),
        ("Ive Klein called", "Ive Klein called"),
        ("I drove 60 km", "Kyle drove 60 km"),
        ("I broke my wrist", "Kyle broke their wrist"),
        ("I can't stand it", "Kyle can't stand it"),
        ("I was late", "Kyle was late"),
        # a prefixed irregular past stays a past; a prefixed base still agrees
        ("I misspoke earlier", "Kyle misspoke earlier"),
        ("I overheard them", "Kyle overheard them"),
        ("I upheld it", "Kyle upheld it"),
        ("I resent that", "Kyle resents that"),
        ("I upset people", "Kyle upsets people"),
        # "'d" is "had" before a participle or "better", "would" otherwise
        ("I'd better have", "Kyle had better have"),
        ("I'd been there", "Kyle had been there"),
        ("I'd finished it", "Kyle had finished it"),
        ("I'd like tea", "Kyle would like tea"),
        ("I'd need a week", "Kyle would need a week"),
        ("we'd gone home", "Kyle and company had gone home"),
        ("my sister", "Kyle's sister"),
        ("tell me", "tell Kyle"),
        ("I told my sister about me", "Kyle told their sister about them"),
        ("we go hiking", "Kyle and company go hiking"),
        ("we were late", "Kyle and company were late"),
        ("we're late", "Kyle and company are late"),
        ("our house", "Kyle's house"),
        ("you remind me", "the companion reminds Kyle"),
        ("your idea", "the companion's idea"),
    ],
)
def test_companion_first_person_becomes_the_user(text: str, expected: str) -> None:
    assert kyle(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("we use Redis", "the team uses Redis"),
        ("we are done", "the team is done"),
        ("we were done", "the team was done"),
        ("we're done", "the team is done"),
        ("we've shipped", "the team has shipped"),
        ("we'll ship", "the team will ship"),
        ("our queue", "the team's queue"),
        ("tell us", "tell the team"),
        ("I fixed it", "The Architect fixed it"),
        ("you push", "you push"),  # no listener given: second person is left alone
    ],
)
def test_default_first_person_plural_becomes_the_team(text: str, expected: str) -> None:
    assert team(text) == expected


def test_after_the_name_is_said_possessives_read_their() -> None:
    assert kyle("my sister", named=True) == "their sister"
    assert kyle("for myself", named=True) == "for themself"
    assert kyle("that is mine", named=True) == "that is theirs"


def test_punctuation_between_subject_and_verb_leaves_the_verb_alone() -> None:
    assert kyle("I, for one, agree") == "Kyle, for one, agree"


def test_an_object_you_is_the_listener_and_no_verb_agrees_with_it() -> None:
    assert kyle("I wanted to tell you about my school event") == (
        "Kyle wanted to tell the companion about their school event"
    )
    assert kyle("I love you") == "Kyle loves the companion"
    assert kyle("you said it, and you were right") == (
        "the companion said it, and the companion was right"
    )
    assert kyle("Great, you have a point") == "Great, the companion has a point"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("we load-tested at 50k", "the team load-tested at 50k"),
        ("I re-ran it on the backup meter", "The Architect re-ran it on the backup meter"),
        ("I re-check it daily", "The Architect re-checks it daily"),
        ("we co-own the repo", "the team co-owns the repo"),
    ],
)
def test_a_hyphenated_verb_agrees_in_its_last_part(text: str, expected: str) -> None:
    assert team(text) == expected


def test_a_verb_spelled_like_its_past_stays_past_where_the_sentence_tells_of_the_past() -> None:
    assert team("we load-tested at 50k but we hit 180k") == (
        "the team load-tested at 50k but the team hit 180k"
    )
    assert team("we cut costs last year") == "the team cut costs last year"
    assert team("we cut costs every quarter") == "the team cuts costs every quarter"


def test_had_before_a_participle_spelled_like_its_base_in_a_past_sentence() -> None:
    assert team("I checked, the current is back at 0.4 A, we'd set them to 0.55 A") == (
        "The Architect checked, the current is back at 0.4 A, the team had set them to 0.55 A"
    )
    assert team("we'd set them to 0.55 A if the spec permits it") == (
        "the team would set them to 0.55 A if the spec permits it"
    )


def test_after_a_suggestion_the_verb_stays_as_said() -> None:
    assert team("Sam suggested we pre-write the story") == (
        "Sam suggested the team pre-write the story"
    )


def test_once_the_speaker_is_named_the_people_they_speak_for_are_they() -> None:
    assert kyle("we still need a crib") == "Kyle and company still need a crib"
    assert kyle("the temple where we got engaged", named=True) == (
        "the temple where they got engaged"
    )
    assert kyle("half of us present the same slides", named=True) == (
        "half of them present the same slides"
    )
    assert team("we were down two cooks", named=True) == "the team was down two cooks"


def test_advice_given_now_is_told_as_such() -> None:
    assert team("I'd suggest keeping the chair on wind hold") == (
        "The Architect suggests keeping the chair on wind hold"
    )
    assert team("we'd recommend switching back") == "the team recommends switching back"
    assert team("I'd rather not") == "The Architect would rather not"


def test_mine_after_a_determiner_is_the_noun() -> None:
    assert team("I send it to the mine planner") == "The Architect sends it to the mine planner"
    assert team("a friend of mine") == "a friend of The Architect's"
    assert kyle("that is mine", named=True) == "that is theirs"


def test_words_that_merely_contain_pronouns_are_untouched() -> None:
    assert team("Iris met Mike in Myanmar and the US team") == (
        "Iris met Mike in Myanmar and the US team"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One. Two three.", ["One.", "Two three."]),
        ("Is it? Yes! Fine.", ["Is it?", "Yes!", "Fine."]),
        ("It uses e.g. Qdrant. Then Redis.", ["It uses e.g. Qdrant.", "Then Redis."]),
        ("J. Smith wrote it. Done.", ["J. Smith wrote it.", "Done."]),
        ("Version 3.5 shipped. Good.", ["Version 3.5 shipped.", "Good."]),
        ("a wrapped\nline of text. Next one.", ["a wrapped line of text.", "Next one."]),
        ("First para.\n\nSecond para", ["First para.", "Second para"]),
        ("- one item\n- two item", ["one item", "two item"]),
        ('He said "go." Then left.', ['He said "go."', "Then left."]),
        # chat that never capitalises still ends its sentences, but not after a short form
        ("can't sleep. third night in a row", ["can't sleep.", "third night in a row"]),
        ("ok so... maybe later", ["ok so... maybe later"]),
        # a spaced ellipsis leaves words out mid-sentence; one after a word may end it
        ("Use SELECT ... FOR UPDATE on both.", ["Use SELECT ... FOR UPDATE on both."]),
        ("I waited... Then it worked.", ["I waited...", "Then it worked."]),
        ("at 3 p.m. tomorrow in the U.S. office", ["at 3 p.m. tomorrow in the U.S. office"]),
        ("it took 5 min. after that it reset", ["it took 5 min. after that it reset"]),
        ("The limit is 10 kg. We ship today.", ["The limit is 10 kg.", "We ship today."]),
        ("", []),
    ],
)
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


@pytest.mark.parametrize(
    ("phrase", "content", "found"),
    [
        ("returns 404", "The API returns 404 for drawers.", True),
        ("returns  404", "The API returns\n404 for drawers.", True),
        ("Returns 404", "The API returns 404 for drawers.", False),
        ("eturns 404", "The API returns 404 for drawers.", False),
        ("returns 40", "The API returns 404 for drawers.", False),
        ("drawers.", "The API returns 404 for drawers.", True),
        ("404 for drawers", "404 for drawers4 and 404 for drawers", True),  # second hit counts
        ("", "anything", False),
    ],
)
def test_signature_in_is_verbatim_on_word_boundaries(
    phrase: str, content: str, found: bool
) -> None:
    assert signature_in(phrase, content) is found


def test_choose_signature_takes_the_longest_phrase_that_ends_a_clause() -> None:
    original = "Never write to the drawer pool outside the retrieval tier."
    content = (
        "The Architect directed that the team never write to the drawer pool outside the "
        "retrieval tier."
    )
    assert choose_signature(original, content, content, min_chars=12) == (
        "drawer pool outside the retrieval tier"
    )


def test_choose_signature_never_returns_the_whole_content_or_a_short_phrase() -> None:
    assert choose_signature("Qdrant edge wins.", "Qdrant edge wins.", "", min_chars=12) is None
    assert choose_signature("Use the big one.", "Use the big one now.", "", min_chars=12) is None
