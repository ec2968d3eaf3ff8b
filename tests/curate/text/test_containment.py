"""The copy inside its containment window, and copies that keep the needle's symbols."""

from curate.text.containment import containment, copy_span, symbols_agree


def test_copy_span_is_the_copy_not_the_widened_window():
    haystack = "背景说明背景说明问谁最早发明了电话答贝尔后续"
    score, start, end = containment("谁发明了电话", haystack)
    assert score == 1.0 and haystack[slice(*copy_span("谁发明了电话", haystack, start, end))] == "谁最早发明了电话"
    assert copy_span("abc", "xxabcxx") == (2, 5)


def test_a_symbol_next_to_a_copy_makes_it_another_text():
    assert not symbols_agree("gradea", "gradea+", 0, 6)            # A is not A+
    assert not symbols_agree("usec", "usec#", 0, 4)                # C is not C#
    assert not symbols_agree("rose50", "rose50%", 0, 6)            # 50 is not 50%
    assert not symbols_agree("5dollars", "$5dollars", 1, 9)        # $5 is not 5
    assert not symbols_agree("ab", "a+b", 0, 3)                    # + inserted inside
    assert symbols_agree("c++", "usec++daily", 3, 6) and symbols_agree("python", "c++python", 3, 9)
