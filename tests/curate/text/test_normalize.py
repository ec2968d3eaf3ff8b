"""Folding keeps the symbols that carry meaning; normalising for quotes drops the spaces a Chinese
corpus was segmented with and makes one the full stops NFKC leaves apart; both start from one
canonical form, so whatever locate finds the leakage check would match."""

import pytest

from curate.text.normalize import canonical, fold, fold_with_map, normalize, normalize_with_map, squeeze_spaces


@pytest.mark.parametrize("text, other", [
    ("A+", "A"), ("C#", "C"), ("C++", "C"), ("50%", "50"), ("30℃", "30c"), ("+86 10 1234", "86 10 1234"),
    ("$5", "5"), ("¥100", "100"), ("5 €", "5"), ("3‰", "3"),
])
def test_a_meaningful_symbol_is_kept(text, other):
    assert fold(text) != fold(other)


@pytest.mark.parametrize("text, same", [
    ("A +", "a+"), ("Ｃ＃", "c#"), ("50 ％", "50%"), ("30℃", "30°c"), ("# Heading", "heading"),
    ("+ - * /", ""), ("100 % sure", "100%sure"), ("LG-4031：令牌 过期！", "lg4031令牌过期"), ("snake_case", "snakecase"),
])
def test_a_symbol_touching_no_number_or_word_is_punctuation(text, same):
    assert fold(text) == fold(same) == same


def test_units_are_letters_and_stay():
    assert fold("5 km, 3 kg, 16 GB") == "5km3kg16gb" != fold("5, 3, 16")


def test_fold_with_map_is_fold_and_points_at_the_original():
    text = "Ｃ ++ 与 C# 占 50 ％，价格 $5。"
    folded, index = fold_with_map(text)
    assert folded == fold(text) == "c++与c#占50%价格$5"
    assert [text[i] for i in index] == list("Ｃ++与C#占50％价格$5")


def test_quote_normalising_drops_spaces_next_to_cjk_only():
    assert normalize("大桥 于 2018年 10月 开通") == "大桥于2018年10月开通"
    assert normalize("使用 Python 编程") == "使用python编程"
    assert normalize("the  rapist") == "the rapist" != normalize("therapist")      # English words stay apart
    assert normalize("Hello,  WORLD") == normalize("Hello, WORLD") == "hello, world"


@pytest.mark.parametrize("text, same", [
    ("较大 。 \n2013 年", "较大。2013年"), ("“ 三百万 ” ， 面积", "“三百万”，面积"), ("时间 ： 2013", "时间：2013"),
    ("55 ， 2018", "55，2018"), ("（ Red Hat ）", "（Red Hat）"), ("Hello，  WORLD", "hello,world"),
])
def test_spaces_beside_cjk_punctuation_are_dropped_as_beside_cjk_characters(text, same):
    """，：；！？（） are CJK punctuation as written, although NFKC makes them ASCII: a segmented corpus puts
    spaces around them that carry no meaning (a full-width comma in English text loses its space too)."""
    assert normalize(text) == normalize(same)


def test_curly_quotes_keep_their_spaces_english_uses_them():
    assert normalize("he said “ yes ” and left") == 'he said " yes " and left'


def test_squeezing_drops_every_space_but_one_between_digits():
    squeezed = squeeze_spaces(*normalize_with_map("MS 物业 于 1993 年 ， Red Hat 系统 ， 2013  2014 年"))
    assert squeezed[0] == "ms物业于1993年,redhat系统,2013 2014年"
    text = "Red Hat 2013 2014"
    norm, index = squeeze_spaces(*normalize_with_map(text))
    assert [text[i] for i in index[:-1]] == list("RedHat2013 2014") and index[-1] == len(text)


def test_full_stops_quotes_and_dashes_are_one():
    assert normalize("开通。") == normalize("开通．") == normalize("开通｡") == normalize("开通.") == "开通."
    assert normalize("“大桥”‘A’") == '"大桥"\'a\''
    assert normalize("2018—2019") == normalize("2018–2019") == normalize("2018-2019")
    assert normalize("开通，") != normalize("开通、")                                # commas are not made one


def test_the_map_points_at_the_original_characters():
    text = "港珠澳大桥 于 2018年 开通 。"
    norm, index = normalize_with_map(text)
    at = norm.index("大桥于2018年开通")
    start, end = index[at], index[at + len("大桥于2018年开通") - 1] + 1
    assert text[start:end] == "大桥 于 2018年 开通"


@pytest.mark.parametrize("text", [
    "港珠澳大桥 于 2018年 开通 。它全长55公里．", "The “bridge” opened—at last. A+ grade, 50 % off, C# code!",
    "问：ＬＧ－４０３１ 是什么意思？\n答：访问令牌已过期。", "  tabs\tand\u3000spaces  ",
    "成立时间 ： 2013 年 ， “ MS 物业 ” ＋ 50 ％ ， C ++ 与 C # 。 \n2013 2014", "+ 86 10 1234 / $ 5",
])
def test_folding_is_normalising_then_dropping(text):
    """One canonical form under both levels: fold(normalize(x)) == fold(x), squeezed or not."""
    assert fold(normalize(text)) == fold(text) == fold(canonical(text))
    assert fold(squeeze_spaces(*normalize_with_map(text))[0]) == fold(text)


def _normalize_one_by_one(text):
    """normalize_with_map's rule, a character at a time (the reference its fast runs must equal)."""
    from curate.text.normalize import _CJK_CONTEXT, _canonical_char
    out, index, space_at, last_cjk = [], [], None, False
    for position, char in enumerate(text):
        if char.isspace():
            space_at = position if space_at is None else space_at
            continue
        cjk = not char.isascii() and bool(_CJK_CONTEXT.match(char))
        if space_at is not None and not (cjk or last_cjk):
            out.append(" ")
            index.append(space_at)
        space_at = None
        for piece in _canonical_char(char):
            if not piece.isspace():
                out.append(piece)
                index.append(position)
        last_cjk = cjk
    if space_at is not None and not last_cjk:
        out.append(" ")
        index.append(space_at)
    return "".join(out), index + [len(text)]


def test_taking_runs_whole_is_taking_characters_one_by_one():
    import random
    rng = random.Random(5)
    alphabet = "aZ9 .,\t\n\u3000\u00a0大桥于，。：“”ＡＢ１２－—ﾊﾟ\u00a8\x00ǅß℃%+#ﬁ①"
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
        norm, index = normalize_with_map(text)
        assert (norm, list(index)) == _normalize_one_by_one(text), repr(text)


def test_ideographs_and_printable_ascii_are_their_own_canonical_form():
    """What lets normalize_with_map take their runs whole, without canonical()."""
    assert all(canonical(chr(c)) == chr(c) for c in range(0x4E00, 0xA000))
    assert all(canonical(chr(c)) == chr(c).lower() for c in range(0x21, 0x7F))
