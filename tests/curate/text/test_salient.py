"""The salient-token rule: what two texts may not differ in and still state the same fact."""

import pytest

from curate.text.salient import salient_difference


@pytest.mark.parametrize("a, b, differs", [
    ("The plan costs $89.99 a month.", "The plan costs $19.99 a month.", "89.99 ≠ 19.99"),
    ("in 2023 the limit rose", "in 2025 the limit rose", "2023 ≠ 2025"),
    ("LG-4031 表示访问令牌已过期。", "LG-4032 表示访问令牌已过期。", "4031 ≠ 4032"),
    ("fixed in v2.0.1", "fixed in v2.0.2", "2.0.1 ≠ 2.0.2"),
    ("renewals close in March 2024", "renewals close in April 2024", "march ≠ april"),
    ("renewals close on 5 May", "renewals close on 5 June", "may ≠ june"),
    ("每月可退款三次", "每月可退款五次", "三 ≠ 五"),
    ("可以退款", "不可以退款", "(none) ≠ 不"),
])
def test_a_changed_number_date_code_or_negation_is_a_difference(a, b, differs):
    assert salient_difference(a, b) == differs


@pytest.mark.parametrize("a, b", [
    ("限额为每分钟 ６００ 次", "限额为每分钟600次"),           # full-width digits are digits
    ("版本 3。2 发布", "版本 3.2 发布"),                    # an ideographic full stop inside a number
    ("You may renew online.", "You can renew online."),    # "may" as a verb is no date
    ("The Pro plan costs $19.99 per month", "The Pro plan costs $19.99 a month"),
])
def test_formatting_and_wording_are_no_difference(a, b):
    assert salient_difference(a, b) is None
