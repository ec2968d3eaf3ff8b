"""Personal data masked by kind: Chinese formats, full-width digits, grouped digits, and the order that
settles collisions (an ID number is not a phone, a card is not a phone, a +86 phone is not a card)."""

import re

import pytest

from curate.errors import InputError
from curate.failures.pii import Scrubber, luhn, resident_id
from curate.failures.rules import load_rules


@pytest.mark.parametrize("text, masked", [
    ("我的手机13812345678，谢谢", "我的手机[PHONE]，谢谢"),                          # mobile inside Chinese text
    ("手机 138-1234-5678 或 138 1234 5678", "手机 [PHONE] 或 [PHONE]"),           # grouped by dashes, spaces
    ("+86 139 0000 1111", "[PHONE]"),                                               # +86
    ("86 138 1234 5678", "[PHONE]"),                                                # passes Luhn, still a phone
    ("全角１３７１２３４５６７８号码", "全角[PHONE]号码"),                              # full-width digits
    ("座机 010-62345678、(021)6234-5678、0755 8888 6666", "座机 [PHONE]、[PHONE]、[PHONE]"),   # landlines
    ("call +44 20 7946 0958 or +1 415-555-2671", "call [PHONE] or [PHONE]"),        # international
    ("mail zhang.san@example.com, 13812345678@163.com", "mail [EMAIL], [EMAIL]"),  # an address holding digits
    ("全角邮箱 wang＠example．org", "全角邮箱 [EMAIL]"),
    ("身份证11010519491231002X结束", "身份证[ID_NUMBER]结束"),                      # X check character
    ("身份证 110105 19491231 002x", "身份证 [ID_NUMBER]"),                           # grouped, lower-case x
    ("110105199003071108", "[ID_NUMBER]"),                                          # passes Luhn too: an ID
    ("卡号 6217 0012 3456 7893", "卡号 [BANK_CARD]"),
    ("卡号6222-0212-3456-7890-128", "卡号[BANK_CARD]"),
    ("ip 192.168.31.7 and 2001:db8::8a2e:370:7334", "ip [IP] and [IP]"),
    ("老身份证110105491231002的户口", "老身份证[ID_NUMBER]的户口"),                   # 15 digits, issued before 1999
    ("我的qq号是12345678，微信号：zhang_san88", "我的qq号是[QQ]，微信号：[WECHAT]"),  # named accounts
    ("加我 vx: abc12345 谢谢", "加我 vx: [WECHAT] 谢谢"),
    ("WeChat ID: john_doe_1", "WeChat ID: [WECHAT]"),
])
def test_each_kind_is_masked_by_its_placeholder(text, masked):
    assert Scrubber().scrub(text) == masked


@pytest.mark.parametrize("text", [
    "LG-4031 是什么意思？", "升级到 3.2.1 之后", "2026-11-03 10:22:11 发生", "订单号 20261103",
    "110105194912310021",      # 18 digits, wrong check digit: neither an ID nor (Luhn fails) a card
    "4111111111111112",        # fails Luhn
    "999.168.1.1", "10:30:00", "每分钟 600 次请求，企业版 6000 次",
    "看看 qq 音乐", "wx支付失败了", "990105491231002",   # no account after the word; province 99: no old ID
])
def test_what_is_not_personal_data_stays(text):
    scrubber = Scrubber()
    assert scrubber.scrub(text) == text and not scrubber.counts


def test_counts_are_per_kind():
    scrubber = Scrubber()
    scrubber.scrub("13812345678 / 13912345678 / a@b.cn / 11010519491231002X")
    assert scrubber.counts == {"PHONE": 2, "EMAIL": 1, "ID_NUMBER": 1}


def test_check_digits_are_the_standard_ones():
    assert resident_id("11010519491231002X") and not resident_id("11010519491331002X")   # month 13
    assert luhn("79927398713") and not luhn("79927398710")                                 # Luhn's own example


def test_team_patterns_come_first_and_a_bad_one_names_the_file_and_key(workspace):
    config = workspace.config_path
    config.write_text(config.read_text(encoding="utf-8") + '\n[failures.pii]\npatterns = { order = "ORD-[0-9]{8}" }\n',
                      encoding="utf-8")
    _, patterns = load_rules(workspace)
    assert Scrubber(patterns).scrub("订单 ORD-13812345 没到") == "订单 [ORDER] 没到"   # not a phone
    config.write_text(config.read_text(encoding="utf-8").replace('"ORD-[0-9]{8}"', '"ORD-[0-9"'), encoding="utf-8")
    with pytest.raises(InputError) as error:
        load_rules(workspace)
    line = config.read_text(encoding="utf-8").splitlines().index('patterns = { order = "ORD-[0-9" }') + 1
    assert re.fullmatch(rf".*curate\.toml:{line}: field 'failures\.pii\.patterns\.order': not a valid regular "
                        r"expression: .*", error.value.located())
