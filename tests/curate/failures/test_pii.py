"""Personal data masked by kind: Chinese formats, full-width digits, grouped digits, and the order that
settles collisions (an ID number is not a phone, a card is not a phone, a +86 phone is not a card)."""

import re
import time

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


@pytest.mark.parametrize("text, masked", [
    # phones with other separators, spaced out, in Chinese numerals (幺 is one, 〇 zero), +86 in brackets
    ("电话 138—1234—5678 打不通", "电话 [PHONE] 打不通"),
    ("客户电话 138–1234–5678 占线", "客户电话 [PHONE] 占线"),
    ("手机 138/1234/5678", "手机 [PHONE]"),
    ("手机是138_1234_5678吗", "手机是[PHONE]吗"),
    ("号码 1 3 8 1 2 3 4 5 6 7 8 绑定失败", "号码 [PHONE] 绑定失败"),
    ("打我电话一三八一二三四五六七八就行", "打我电话[PHONE]就行"),
    ("号码幺三八 幺二三四 五六七八", "号码[PHONE]"),
    ("(+86)13900001111 收不到", "[PHONE] 收不到"),
    ("请拨 0086 13900001111", "请拨 [PHONE]"),
    ("座机 010—62345678 转分机", "座机 [PHONE] 转分机"),
    ("固话 021/62345678 报修", "固话 [PHONE] 报修"),
    ("家里电话 62345678 打不通", "家里电话 [PHONE] 打不通"),   # a local number, named
    ("订单 13812345678 没到", "订单 [PHONE] 没到"),
    ("手机 138\u200b1234\u200b5678，138\u00a01234\u00a05678", "手机 [PHONE]，[PHONE]"),   # invisible, no-break spaces           # named as an order, shaped as a mobile: masked
    # e-mail: Chinese domains, spelled out, # for @, a Chinese full stop for the dot
    ("联系邮箱：张三@例子.中国", "联系邮箱：[EMAIL]"),
    ("学校邮箱 wang@北京大学.cn", "学校邮箱 [EMAIL]"),
    ("mail me: zhang at example dot com", "mail me: [EMAIL]"),
    ("zhang [at] example [dot] com", "[EMAIL]"),
    ("write to zhang(at)example.com", "write to [EMAIL]"),
    ("邮箱是zhangsan艾特163点com", "邮箱是[EMAIL]"),
    ("邮箱zhangsan#163.com", "邮箱[EMAIL]"),
    ("邮箱 zhangsan@qq。com 对吗", "邮箱 [EMAIL] 对吗"),
    # named values, whatever their check digits: 110105194912310021 has a wrong check digit,
    # 6222021234567890 and 6217001234567890 fail Luhn
    ("身份证号：110105194912310021 提示格式错误", "身份证号：[ID_NUMBER] 提示格式错误"),
    ("公民身份号码 110105194912310021", "公民身份号码 [ID_NUMBER]"),
    ("ID card number 11010519491231002X", "ID card number [ID_NUMBER]"),
    ("银行卡 6222 0212 3456 7890 绑不上", "银行卡 [BANK_CARD] 绑不上"),
    ("银行卡号：6217001234567890 无效", "银行卡号：[BANK_CARD] 无效"),
    ("储蓄卡 621700123456789012 冻结了", "储蓄卡 [BANK_CARD] 冻结了"),
    ("扣扣 12345678 被盗了", "扣扣 [QQ] 被盗了"),
    ("Q号 2345678901 申诉", "Q号 [QQ] 申诉"),
    ("加微 abc123456 详聊", "加微 [WECHAT] 详聊"),
    ("V信 wxid_abc123 已添加", "V信 [WECHAT] 已添加"),
    ("薇信：lisi2024 找我", "薇信：[WECHAT] 找我"),
    ("加我微信 zhangsanfeng 就行", "加我微信 [WECHAT] 就行"),
    # passports, plates (new energy: six characters after the letter; lower case too)
    ("护照号 E12345678 过期了", "护照号 [PASSPORT] 过期了"),
    ("护照 EA1234567", "护照 [PASSPORT]"),
    ("passport number 123456789 invalid", "passport number [PASSPORT] invalid"),
    ("车牌京A·12345 进不了", "车牌[PLATE] 进不了"),
    ("粤B12345 的违章", "[PLATE] 的违章"),
    ("新能源车牌 粤B·D12345", "新能源车牌 [PLATE]"),
    ("浙A12345F 是货车吗", "[PLATE] 是货车吗"),
    ("车牌 川a12345", "车牌 [PLATE]"),
])
def test_every_shape_is_masked_whatever_its_spelling(text, masked):
    assert Scrubber().scrub(text) == masked


@pytest.mark.parametrize("text", [
    "订单号：2026110312345678 待发货",     # named as an order number (passes no Luhn anyway: kept by its name)
    "order #1000023456 was charged twice",  # libphonenumber reads 1000023456 as a number: the name keeps it
    "条码 6901234567892 扫不出来",           # an EAN-13 barcode that passes Luhn: no card network opens 69
    "ts=1794700800123 的日志",               # milliseconds since 1970, 13 digits
    "微信 openid 获取失败", "WeChat payment fails on iOS", "Q3 2026 的路线图",
    "I looked at the dot com bubble", "Can I log in at portal.example.com?",
    "产品编号 E1001", "G1234 次列车晚点", "京A 和 粤B 的区别", "型号 SM-G9980", "2026/11/03 的账单",
    "ISBN 978-7-111-12345-6", "第一二三四五六期", "hotel 1234567 room", "工单号 WO-20261103-7788",
])
def test_look_alikes_stay(text):
    scrubber = Scrubber()
    assert scrubber.scrub(text) == text and not scrubber.counts


@pytest.mark.parametrize("row_id, masked", [
    ("u13812345678", "u[PHONE]"), ("wx_13812345678_20261103", "wx_[PHONE]_20261103"),
    ("11010519491231002X_001", "[ID_NUMBER]_001"), ("card6217001234567893x", "card[BANK_CARD]x"),
    ("tr-zhang.san@example.com", "[EMAIL]"),   # "-" belongs to an address
    ("tr-0000123", "tr-0000123"), ("550e8400-e29b-41d4-a716-446655440000", "550e8400-e29b-41d4-a716-446655440000"),
])
def test_numbers_inside_a_row_id_are_masked(row_id, masked):
    assert Scrubber().scrub_id(row_id) == masked


def test_a_long_text_keeps_every_phone_masked():
    # 70,000 numbers that are no phone before the last one: libphonenumber's matcher, run over the whole
    # text, gave up after 65,535 of them and left the phone at the end as it was
    text = "订单 20261103 已付，" * 70_000 + "最后打 010-62345678"
    masked = Scrubber().scrub(text)
    assert masked.endswith("最后打 [PHONE]") and masked.count("[PHONE]") == 1


def test_the_phone_matcher_reads_a_short_window_at_a_time(monkeypatch):
    import phonenumbers
    from curate.failures import pii
    seen = []
    real = phonenumbers.PhoneNumberMatcher

    def recording(text, *args, **kwargs):
        seen.append(len(text))
        return real(text, *args, **kwargs)

    monkeypatch.setattr(pii.phonenumbers, "PhoneNumberMatcher", recording)
    digits = " ".join("7" * 200_000)          # one run of 400,000 characters, a phone number in its middle
    text = f"开头 {digits[:200_001]} 010-62345678 {digits[:200_001]} 结尾"
    masked = pii.Scrubber().scrub(text)
    assert "[PHONE]" in masked and "62345678" not in masked
    assert seen and max(seen) <= 3 * pii.WINDOW + pii.CONTEXT + 1


def _seconds(function, text: str) -> float:
    """Return the least CPU time of three calls (CPU, not wall time: on a busy machine a long call waits
    for the cores more often than a short one)."""
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        function(text)
        best = min(best, time.process_time() - start)
    return best


def test_masking_is_linear_in_the_text():
    """Ten times the text takes about ten times as long (a pattern that backtracks, or a copy of the text
    per span found, takes a hundred): each unit below, repeated, is the worst case of one pattern."""
    units = ["a", "a1", "1 ", "1-", "1.2.", "a.b.", "ab at ", "a@", "a@b.", "x#", "身份证 ", "卡号", "微信 ", "qq ",
             "京A", "+(", "13812345678，", "订单号 2026 ", "一二三", "1:2:", "zhang艾特", "—1", "a@b.cn ", "1.2.3.4 "]
    scrubber = Scrubber()
    slow = {}
    for unit in units:
        small, large = (_seconds(scrubber.scrub, (unit * (size // len(unit) + 1))[:size]) for size in (20_000, 200_000))
        if large > 20 * small + 0.02:   # 20 ms of slack: the noise on the small one
            slow[unit] = (round(small, 4), round(large, 4))
    assert not slow
