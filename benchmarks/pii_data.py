"""The masking benchmark's data: personal data planted in realistic support-log sentences, and
look-alikes that must stay as they are. Written by hand for this benchmark (no real person's data:
the numbers are test numbers, made-up ones, or ones whose check digits were computed to fit).

Imported by benchmarks/pii_masking.py, which runs it (see its docstring).

- PLANTED: (kind, sentence, value, field). `value` is the personal data as written in the sentence;
  it is missed when any five characters of it in a row (letters, digits and Chinese characters, its
  punctuation aside) are still in the masked sentence. `field` is "text" (a question, an answer) or
  "id" (a row id, masked for the provenance with `Scrubber.scrub_id`).
- LOOKALIKES: sentences holding order numbers, amounts, error codes, dates, versions, product model
  numbers, barcodes, timestamps and the like; masking any of them in any way is a false mask.
- NOT_MASKED: names and street addresses, planted the same way; they are not masked (no detector for
  them ships here) and are counted apart, so the benchmark says how many pass unmasked.
"""

PLANTED = [
    # Chinese mobiles, every grouping and separator
    ("PHONE", "我的手机13812345678，麻烦回电", "13812345678", "text"),
    ("PHONE", "电话 138-1234-5678 打不通怎么办", "138-1234-5678", "text"),
    ("PHONE", "手机号 138 1234 5678，下午联系我", "138 1234 5678", "text"),
    ("PHONE", "联系方式：138—1234—5678（工作日）", "138—1234—5678", "text"),
    ("PHONE", "客户留的电话 138–1234–5678 一直占线", "138–1234–5678", "text"),
    ("PHONE", "手机 138/1234/5678 收不到验证码", "138/1234/5678", "text"),
    ("PHONE", "登记的手机是138_1234_5678吗", "138_1234_5678", "text"),
    ("PHONE", "手机号码 1 3 8 1 2 3 4 5 6 7 8 绑定失败", "1 3 8 1 2 3 4 5 6 7 8", "text"),
    ("PHONE", "打我电话一三八一二三四五六七八就行", "一三八一二三四五六七八", "text"),
    ("PHONE", "我的号码是幺三八 幺二三四 五六七八", "幺三八 幺二三四 五六七八", "text"),
    ("PHONE", "手机：一三九〇〇〇〇一一一一，别发短信", "一三九〇〇〇〇一一一一", "text"),
    ("PHONE", "境外用户 +86 139 0000 1111 登录报错", "+86 139 0000 1111", "text"),
    ("PHONE", "号码 +86-139-0000-1111 被锁", "+86-139-0000-1111", "text"),
    ("PHONE", "(+86)13900001111 收不到短信", "13900001111", "text"),
    ("PHONE", "请拨 0086 13900001111 找我", "0086 13900001111", "text"),
    ("PHONE", "账号绑定的是8613900001111", "8613900001111", "text"),
    ("PHONE", "全角号码１３７１２３４５６７８无法验证", "１３７１２３４５６７８", "text"),
    ("PHONE", "手机13812345678转人工客服", "13812345678", "text"),
    ("PHONE", "Please call me at 138.1234.5678 after 6pm", "138.1234.5678", "text"),
    ("PHONE", "My cell is 139 0000 1111, thanks", "139 0000 1111", "text"),
    ("PHONE", "两个号码13812345678/13912345670都收不到", "13912345670", "text"),
    ("PHONE", "手机：138 1234 5678。", "138 1234 5678", "text"),
    ("PHONE", "联系电话:15012345678,尽快处理", "15012345678", "text"),
    ("PHONE", "reach me on +86 186 1234 5678 tonight", "+86 186 1234 5678", "text"),
    ("PHONE", "订单 13812345678 一直没发货", "13812345678", "text"),
    ("PHONE", "手机 138\u200b1234\u200b5678（复制来的）", "138\u200b1234\u200b5678", "text"),
    ("PHONE", "电话\u00a0138\u00a01234\u00a05678", "138\u00a01234\u00a05678", "text"),
    # landlines and local numbers
    ("PHONE", "公司座机 010-62345678 没人接", "010-62345678", "text"),
    ("PHONE", "电话 (021)6234-5678 是总部吗", "(021)6234-5678", "text"),
    ("PHONE", "打 0755 8888 6666 转 2 号键", "0755 8888 6666", "text"),
    ("PHONE", "座机 010—62345678 转分机", "010—62345678", "text"),
    ("PHONE", "固话 021/62345678 报修", "021/62345678", "text"),
    ("PHONE", "家里电话 62345678 打不通", "62345678", "text"),
    ("PHONE", "电话：0571-8765 4321", "0571-8765 4321", "text"),
    # international numbers
    ("PHONE", "call +44 20 7946 0958 for the London office", "+44 20 7946 0958", "text"),
    ("PHONE", "my number is +1 415-555-2671", "+1 415-555-2671", "text"),
    ("PHONE", "US support at +1 (415) 555-2671 never answers", "+1 (415) 555-2671", "text"),
    ("PHONE", "东京分公司 +81 3-1234-5678 的电话", "+81 3-1234-5678", "text"),
    ("PHONE", "香港手机 +852 9123 4567 收不到", "+852 9123 4567", "text"),
    ("PHONE", "台湾用户 +886 912 345 678 注册失败", "+886 912 345 678", "text"),
    # e-mail addresses, plain, Chinese domains, spelled out
    ("EMAIL", "发到 zhang.san@example.com 就行", "zhang.san@example.com", "text"),
    ("EMAIL", "邮箱13812345678@163.com收不到邮件", "13812345678@163.com", "text"),
    ("EMAIL", "全角邮箱 wang＠example．org 无效", "wang＠example．org", "text"),
    ("EMAIL", "联系邮箱：张三@例子.中国", "张三@例子.中国", "text"),
    ("EMAIL", "发票寄 lisi@例子.公司 可以吗", "lisi@例子.公司", "text"),
    ("EMAIL", "学校邮箱 wang@北京大学.cn 登不上", "wang@北京大学.cn", "text"),
    ("EMAIL", "mail me: zhang at example dot com", "zhang at example dot com", "text"),
    ("EMAIL", "my address is zhang [at] example [dot] com", "zhang [at] example [dot] com", "text"),
    ("EMAIL", "write to zhang(at)example.com please", "zhang(at)example.com", "text"),
    ("EMAIL", "email: john.doe AT gmail DOT com", "john.doe AT gmail DOT com", "text"),
    ("EMAIL", "邮箱是zhangsan艾特163点com", "zhangsan艾特163点com", "text"),
    ("EMAIL", "邮箱 zhangsan 艾特 qq 点 com 收不到", "zhangsan 艾特 qq 点 com", "text"),
    ("EMAIL", "邮箱zhangsan#163.com（#换成@）", "zhangsan#163.com", "text"),
    ("EMAIL", "邮箱 zhangsan@qq。com 对吗", "zhangsan@qq。com", "text"),
    ("EMAIL", "发到 li.si @ example.cn 吧", "li.si @ example.cn", "text"),
    ("EMAIL", "reach me: wang (at) outlook (dot) com", "wang (at) outlook (dot) com", "text"),
    ("EMAIL", "Contact: mary_jones+billing@company.co.uk", "mary_jones+billing@company.co.uk", "text"),
    # resident ID numbers
    ("ID_NUMBER", "身份证11010519491231002X认证失败", "11010519491231002X", "text"),
    ("ID_NUMBER", "身份证 110105 19491231 002x 被占用", "110105 19491231 002x", "text"),
    ("ID_NUMBER", "身份证号：110105194912310021 提示格式错误", "110105194912310021", "text"),
    ("ID_NUMBER", "身份证号码 440305199001011234 实名不通过", "440305199001011234", "text"),
    ("ID_NUMBER", "ID card number 11010519491231002X rejected", "11010519491231002X", "text"),
    ("ID_NUMBER", "老身份证110105491231002能用吗", "110105491231002", "text"),
    ("ID_NUMBER", "证件号 320102198001011235 输错了", "320102198001011235", "text"),
    ("ID_NUMBER", "我的身份证是 11010519491231002X，能改吗", "11010519491231002X", "text"),
    ("ID_NUMBER", "实名信息 110105199003071108 审核中", "110105199003071108", "text"),
    ("ID_NUMBER", "公民身份号码 110105194912310021 不对", "110105194912310021", "text"),
    # bank cards
    ("BANK_CARD", "卡号 6217 0012 3456 7893 扣款失败", "6217 0012 3456 7893", "text"),
    ("BANK_CARD", "卡号6222-0212-3456-7890-128退款", "6222-0212-3456-7890-128", "text"),
    ("BANK_CARD", "银行卡 6222 0212 3456 7890 绑不上", "6222 0212 3456 7890", "text"),
    ("BANK_CARD", "银行卡号：6217001234567890 提示无效", "6217001234567890", "text"),
    ("BANK_CARD", "信用卡 4111 1111 1111 1111 被拒", "4111 1111 1111 1111", "text"),
    ("BANK_CARD", "退款到 6217 0012 3456 7893 还是原路", "6217 0012 3456 7893", "text"),
    ("BANK_CARD", "card number 5500 0000 0000 0004 declined", "5500 0000 0000 0004", "text"),
    ("BANK_CARD", "储蓄卡 621700123456789012 冻结了", "621700123456789012", "text"),
    ("BANK_CARD", "借记卡6228480402564890018怎么解绑", "6228480402564890018", "text"),
    # QQ and WeChat accounts
    ("QQ", "我的qq号是12345678，加一下", "12345678", "text"),
    ("QQ", "QQ：987654321 找不回密码", "987654321", "text"),
    ("QQ", "扣扣 12345678 被盗了", "12345678", "text"),
    ("QQ", "Q号 2345678901 申诉", "2345678901", "text"),
    ("QQ", "加QQ 345678912 发你文件", "345678912", "text"),
    ("QQ", "企鹅号 55667788 登录异常", "55667788", "text"),
    ("WECHAT", "微信号：zhang_san88，方便联系", "zhang_san88", "text"),
    ("WECHAT", "加微 abc123456 详聊", "abc123456", "text"),
    ("WECHAT", "V信 wxid_abc123 已添加", "wxid_abc123", "text"),
    ("WECHAT", "薇信：lisi2024 找我", "lisi2024", "text"),
    ("WECHAT", "加我 vx: abc12345 谢谢", "abc12345", "text"),
    ("WECHAT", "wx：zhangsan_01 拉群", "zhangsan_01", "text"),
    ("WECHAT", "WeChat ID: john_doe_1", "john_doe_1", "text"),
    ("WECHAT", "加我微信 zhangsanfeng 就行", "zhangsanfeng", "text"),
    ("WECHAT", "威信 abc_7788 在线", "abc_7788", "text"),
    ("WECHAT", "微信 wxid_k3j4h5 付款失败", "wxid_k3j4h5", "text"),
    # passports and licence plates
    ("PASSPORT", "护照号 E12345678 过期了", "E12345678", "text"),
    ("PASSPORT", "护照 EA1234567 能订票吗", "EA1234567", "text"),
    ("PASSPORT", "passport no. G12345678 was rejected", "G12345678", "text"),
    ("PASSPORT", "我的护照号码是 E98765432", "E98765432", "text"),
    ("PASSPORT", "passport number 123456789 invalid", "123456789", "text"),
    ("PASSPORT", "港澳通行证 C12345678 续签", "C12345678", "text"),
    ("PLATE", "车牌京A·12345 进不了停车场", "京A·12345", "text"),
    ("PLATE", "粤B12345 的违章怎么处理", "粤B12345", "text"),
    ("PLATE", "车牌号沪C 23456 识别错误", "沪C 23456", "text"),
    ("PLATE", "新能源车牌 粤B·D12345 不能开闸", "粤B·D12345", "text"),
    ("PLATE", "京AD12345 充电桩绑定", "京AD12345", "text"),
    ("PLATE", "浙A12345F 是货车吗", "浙A12345F", "text"),
    ("PLATE", "苏E8K9J2 的车主", "苏E8K9J2", "text"),
    ("PLATE", "车牌 川a12345 小写也要能查", "川a12345", "text"),
    # IP addresses
    ("IP", "from 192.168.31.7 登录被拦截", "192.168.31.7", "text"),
    ("IP", "ip 2001:db8::8a2e:370:7334 被封", "2001:db8::8a2e:370:7334", "text"),
    # numbers inside row ids
    ("PHONE", "u13812345678", "13812345678", "id"),
    ("PHONE", "wx_13812345678_20261103", "13812345678", "id"),
    ("ID_NUMBER", "11010519491231002X_001", "11010519491231002X", "id"),
    ("PHONE", "order-13900001111", "13900001111", "id"),
    ("EMAIL", "tr-zhang.san@example.com", "zhang.san@example.com", "id"),
    ("BANK_CARD", "card6217001234567893x", "6217001234567893", "id"),
]

LOOKALIKES = [
    "订单号 20261103123456 没到货", "订单号：2026110312345678 一直显示待发货", "order #1000023456 was charged twice",
    "运单号 SF1234567890123 查不到", "金额 89.99 元怎么退", "退款 ¥1,234.50 什么时候到", "总价 $19.99 还是 $89.99？",
    "每分钟 600 次请求，企业版 6000 次", "错误码 LG-4031 是什么意思？", "ORA-00942: table or view does not exist",
    "error 0x80070005 when installing", "HTTP 502 Bad Gateway after upgrade", "升级到 3.2.1 之后就打不开了",
    "version v2.10.3 broke login", "2026-11-03 10:22:11 发生超时", "2026/11/03 的账单不对", "03/11/2026 invoice missing",
    "2026年11月3日的订单", "时间戳 1794700800 对应哪天", "ts=1794700800123 的日志", "型号 SM-G9980 能刷机吗",
    "iPhone 15 Pro Max 闪退", "RTX 4090 显卡驱动", "路由器 AX3000 掉线", "ThinkPad X1 Carbon Gen 11 蓝屏",
    "HUAWEI P60 Pro 怎么截图", "产品编号 E1001 停产了吗", "端口 8080 和 443 都开了", "999.168.1.1 是合法地址吗",
    "10:30:00 准时开始", "看看 qq 音乐", "wx支付失败了", "微信支付 v3 接口报错", "微信 openid 获取失败",
    "WeChat payment fails on iOS", "Q3 2026 的路线图什么时候发", "Can I log in at portal.example.com?",
    "I looked at the dot com bubble", "京东订单 123456 退货", "沪深300指数基金", "第1234567期开奖", "邮编 100080 对吗",
    "电话费 100 元充错了", "账单号 20261103-0001 重复", "ticket 13812345 is still open", "commit a1b2c3d4e5 reverted it",
    "uuid 550e8400-e29b-41d4-a716-446655440000 not found", "1,000,000 次调用的费用", "圆周率 3.1415926535",
    "会议号 123 456 789 进不去", "ISBN 978-7-111-12345-6 的书", "GB/T 7714-2015 格式", "CVE-2024-12345 修了吗",
    "E-4031 报错", "G1234 次列车晚点", "分机 8001 没人接", "2026 年 Q4 营收 1.2 亿", "京A 和 粤B 的区别",
    "条码 6901234567892 扫不出来", "余额 12345678.90 元", "SKU 100012345678 缺货", "发票号码 04400123456789",
    "batch 2026-11-1 of 30104 rows", "库存 1380 件，单价 12.5", "page 138 of 1234", "用了 138 GB 流量",
    "IPv6 地址怎么配置", "lumenctl 2.3.1 --port 9000", "chunk errors.zh.md#1 的内容", "提现 5000 元到账了吗",
    "请在 2026-11-30 23:59 前续费", "速度 13.8 MB/s", "1+1=2 吗", "hotel 1234567 room", "序列号 SN2026110300001 保修",
    "工单 WO-20261103-7788 还没处理", "第 3 页第 12 行", "价格从 ¥1999 降到 ¥1499",
]

NOT_MASKED = [
    ("NAME", "我叫张伟，订单一直没到", "张伟"),
    ("NAME", "请转告李娜经理退款还没收到", "李娜"),
    ("NAME", "Hi, this is John Smith from Acme", "John Smith"),
    ("ADDRESS", "寄到上海市浦东新区张江路88弄3号楼502室", "张江路88弄3号楼502室"),
    ("ADDRESS", "ship it to 221B Baker Street, London", "221B Baker Street"),
]
