"""The natural-text leakage benchmark's data (benchmarks/leakage_natural.py): a support KB written for it,
in Chinese and English, and evaluation items labelled with where, if anywhere, each truly leaks.

The KB reads like a real one: FAQ pages (问：/答：, numbered, **Q:**/A:, ### headings), product pages and
news written as running prose, a review and a column that mention the same topics inside sentences, help
pages that all end with the same "popular questions" block (one FAQ in many chunks), an FAQ page kept twice
(an archived copy), a policy paragraph that two pages share, internal notes that quote evaluation text,
and near-miss product names (星河X10 / 星河X10 Pro, Aurora R7 / Aurora R7 Max, 标准版 / 专业版).

Each item: `id`, `question`, `answer`, `evidence` (quotes located by `curate import`), `case` (what it
tests) and `leaks`: a list of places, each a list of documents that hold one copy of the leak (an FAQ in
several documents is one place: the check should report it once, listing the copies). An empty list: the
item leaks nowhere; every finding for it is a false positive.

Cases that leak: faq_verbatim, faq_reformatted, faq_copies (one FAQ in several documents), question_pasted
(an evaluation question pasted into notes), keyword_as_faq (a keyword query written into an FAQ as a
question), long_answer_copied, paraphrase_faq (same intent as an FAQ question, other words: only a semantic
pass can find it). Cases that do not: more_specific (the KB asks a longer question about something more
specific), near_miss_name (the KB asks the same about another model), topic_in_prose (a keyword query
inside a running sentence), answer_in_own_evidence (a long answer taken from the item's own evidence, which
another page also holds), words_in_common, other_intent (same topic, another question: a hard negative for
the semantic pass).
"""

SIDEBAR_ZH = "## 热门问题\n\n问：如何联系人工客服？\n答：在App内点击“我的 > 客服”，或拨打400-820-1234（每天9:00-21:00）。\n"
SIDEBAR_EN = ("---\n\nPopular questions\n\nQ: How do I contact a human agent?\nA: Use the chat button in the app, or "
              "call +1 800 555 0134 (8am-8pm, every day).\n")
FOOTER_ZH = "本页内容由星河科技客服中心整理，转载请注明出处。"
POLICY_ZH = "退款须在购买后七天内申请。审核通过后，款项将在三个工作日内原路退回，手续费由平台承担。"
PRICING_EN = ("The Team plan costs $12 per user per month, billed yearly. Every plan includes single sign-on and an "
              "audit log that keeps events for one year.")

XINGHE_FAQ = """# 星河X10 Pro 常见问题

问：星河X10 Pro的首发价格是多少？
答：星河X10 Pro首发价格为5999元，对应12GB+256GB版本。

问：星河X10 Pro支持多少瓦快充？
答：支持120瓦有线快充和50瓦无线快充。

问：星河X10 Pro的屏幕刷新率是多少？
答：最高支持144Hz自适应刷新率。

问：如何开启双卡双待？
答：进入“设置 > 移动网络 > SIM卡管理”，打开“双卡双待”开关即可。

问：手机进水后还能保修吗？
答：进水属于人为损坏，不在免费保修范围内，可以付费维修。

问：某品牌新款手机的首发价格是多少？
答：请以各品牌官方公布的价格为准。
"""

DOCS = {
    # -- Chinese --------------------------------------------------------------------------------------------
    "xinghe-faq.zh.md": XINGHE_FAQ,
    "xinghe-faq-2023-archive.zh.md": XINGHE_FAQ,
    "xinghe-x10-launch.zh.md": """# 星河X10发布会回顾

3月12日，星河科技在深圳举行新品发布会，正式推出星河X10。星河X10首发价格为3999元，对应8GB+256GB版本，3月15日起在官方商城开售。

星河X10搭载自研芯片，电池容量为5000毫安时，支持67瓦有线快充。不少用户关心星河X10的电池容量，官方表示正常使用可以坚持一天半。

发布会上，星河科技还宣布将为星河X10提供四年系统更新，并开放双卡双待、eSIM等功能的设置指引。
""",
    "xinghe-review.zh.md": """# 星河X10上手体验

拿到星河X10的第一感受是轻。很多读者来信问星河X10的首发价格是否值得，我们的看法是：在同价位里，它的影像和续航都属于第一梯队。

关于屏幕，星河X10采用120Hz刷新率的屏幕，日常滑动非常流畅。快充方面，67瓦有线快充大约40分钟可以充满。我们也测了双卡双待，开启后待机耗电略有增加。

总体来看，星河X10适合注重续航的用户。
""",
    "cloud-faq.zh.md": """# 云盘常见问题

## 容量与套餐

1. 云盘专业版的存储空间有多大？
专业版提供2TB存储空间，可以随时扩容。

2. 标准版可以升级到专业版吗？
可以，在“账户 > 套餐”中选择升级，差价按剩余天数折算。

3. 专业版单个文件最大可以上传多少？
专业版单个文件最大20GB。

## 安全

4. 忘记密码怎么办？
在登录页点击“忘记密码”，通过绑定的手机号重置。

5. 分享链接可以设置有效期吗？
可以，分享时可选择1天、7天或永久有效。

6. 回收站文件保留天数？
30天，之后自动彻底删除。
""",
    "cloud-manual.zh.md": """# 云盘使用手册

云盘标准版提供200GB存储空间，适合个人用户；专业版提供2TB存储空间，适合团队协作。

上传文件时，标准版单个文件最大4GB。超过限制的文件会提示“文件过大”，可以使用客户端分卷上传。

创建分享链接后，可以在分享管理中设置提取码和有效期，也可以随时取消分享。

回收站中的文件保留30天，30天后自动彻底删除，无法恢复。
""",
    "refund-policy.zh.md": f"# 退款政策\n\n{POLICY_ZH}\n\n已使用的兑换码、定制类商品不支持退款。\n\n{FOOTER_ZH}\n",
    "help-refund.zh.md": f"# 帮助中心：退款\n\n{POLICY_ZH}\n\n退款进度可以在“我的订单”中查看。\n\n{SIDEBAR_ZH}\n{FOOTER_ZH}\n",
    "help-account.zh.md": f"# 帮助中心：账户\n\n注销账户后，账户内的订单记录和积分将被清空，且无法恢复。\n\n{SIDEBAR_ZH}\n{FOOTER_ZH}\n",
    "help-invoice.zh.md": f"# 帮助中心：发票\n\n订单完成后30天内可以申请电子发票，发票将发送到预留的邮箱。\n\n{SIDEBAR_ZH}\n{FOOTER_ZH}\n",
    "help-shipping.zh.md": f"# 帮助中心：配送\n\n普通快递一般3到5天送达，偏远地区可能延长。\n\n{SIDEBAR_ZH}\n{FOOTER_ZH}\n",
    "metro-news.zh.md": """# 深圳地铁14号线开通运营

深圳地铁14号线于10月28日开通运营，线路全长50.3公里，设站18座，连接福田中心区与坪山。市民关心的票价按现行里程计价标准执行，全程最高票价11元。
""",
    "commute-column.zh.md": """# 通勤专栏：东进的新选择

有读者算过，深圳地铁14号线全程最高票价并不算贵，比打车便宜得多。早高峰时段，14号线的车厢依然拥挤，建议错峰出行。
""",
    "training-notes.zh.md": """# 客服培训笔记

培训时讲师举了几个典型问题。第一个：星河X10 Pro进水以后还能免费保修吗？这类问题要先确认是否属于人为损坏。

标准回答参考：回收站中的文件保留30天，30天后会自动彻底删除且无法恢复，请提醒用户及时备份重要文件。
""",
    # -- English --------------------------------------------------------------------------------------------
    "aurora-faq.en.md": """# Aurora R7 Max FAQ

**Q: How many devices can the Aurora R7 Max connect at once?**
A: Up to 128 devices on the 6 GHz and 5 GHz bands combined.

**Q: Does the Aurora R7 Max support Wi-Fi 7?**
A: Yes. It supports Wi-Fi 7 with 320 MHz channels.

**Q: Aurora R7 Max guest network?**
A: Yes, up to two guest networks with their own passwords.

**Q: How do I reset the admin password?**
A: Hold the reset button for 10 seconds, then sign in with the password printed on the label.

**Q: How do I reset the admin password if I no longer have access to the Aurora app or to the email address on the account?**
A: Contact support with your proof of purchase.
""",
    "aurora-r7.en.md": """# Aurora R7

The Aurora R7 is a dual-band Wi-Fi 6 router for homes up to 200 square metres. It connects up to 64 devices at once and has four gigabit Ethernet ports.

Firmware updates for the Aurora R7 are released every month and install automatically overnight. The Aurora R7 firmware update schedule is published on the status page.

To reset the Aurora R7, hold the reset button for 10 seconds until the light blinks amber. The admin password then returns to the one printed on the label.
""",
    "aurora-review.en.md": """# Aurora R7 review

We spent three weeks with the Aurora R7. Readers who complained about the Aurora R7 firmware update schedule in the past will be pleased: updates now arrive every month, without a restart during the day.

How many devices can it handle? In our flat, 40 phones, laptops and smart plugs stayed connected without drops.
""",
    "billing.en.md": f"""# Billing

Plans are billed monthly or yearly. When you change plans in the middle of a billing cycle, the difference is prorated to the day and shown on your next invoice.

Each team workspace includes 1 TB of storage; additional storage costs $5 per 100 GB per month.

Invoices are sent to the billing contact on the first day of each month. You can download past invoices from Settings > Billing.

{PRICING_EN}
""",
    "billing-faq.en.md": """# Billing FAQ

### Can I change my plan in the middle of a billing cycle?
Yes. The difference is prorated to the day and shown on your next invoice.

### Where can I download past invoices?
From Settings > Billing > Invoices.

### How much does extra storage cost for a team workspace on the Enterprise plan?
Enterprise workspaces get extra storage at $3 per 100 GB per month.
""",
    "pricing-2024-archive.en.md": f"# Pricing (archived page)\n\n{PRICING_EN}\n\nPrices exclude VAT.\n",
    "storage-blog.en.md": """# Five things admins learned this quarter

Admins often hit the team workspace storage limit at quarter end, when large exports pile up. Archiving old projects frees space quickly.

Another lesson: invoices go to the billing contact, so keep that address current.
""",
    "trash.en.md": """# Trash

Deleted files stay in the trash for 30 days, then they are removed permanently. Files in the trash do not count toward your storage.

To restore a file, open the trash, select the file and choose Restore.
""",
    "support-notes.en.md": """# Support notes

Customers keep asking the same things in the community forum. One of them: how long do deleted files stay in the trash before they are removed for good? Nobody on the forum knew.

From the onboarding deck: Deleted files stay in the trash for 30 days. After that they are removed permanently and cannot be restored, so remind customers to export anything they still need.
""",
    "help-security.en.md": f"# Help: security\n\nTwo-factor authentication can be turned on under Settings > Security.\n\n{SIDEBAR_EN}",
    "help-exports.en.md": f"# Help: exports\n\nExports of more than 10 GB are split into several archives.\n\n{SIDEBAR_EN}",
    "help-sharing.en.md": f"# Help: sharing\n\nShared links can be protected with a password and an expiry date.\n\n{SIDEBAR_EN}",
    "rates-news.en.md": """# Central bank holds rates

The central bank kept its benchmark rate at 4.5% on Thursday. Markets had expected the pause after inflation cooled in the spring. Analysts said the central bank benchmark rate decision signals cuts later in the year.
""",
    "markets-column.en.md": """# Markets this week

Traders spent the week reading every line of the central bank benchmark rate decision, and bond yields barely moved.
""",
}


def item(id, case, question, answer, evidence, leaks=()):
    return {"id": id, "case": case, "question": question, "answer": answer, "evidence": list(evidence),
            "leaks": [list(place) for place in leaks]}


FAQ_ZH = ("xinghe-faq.zh.md", "xinghe-faq-2023-archive.zh.md")
HELP_ZH = ("help-refund.zh.md", "help-account.zh.md", "help-invoice.zh.md", "help-shipping.zh.md")
HELP_EN = ("help-security.en.md", "help-exports.en.md", "help-sharing.en.md")

ITEMS = [
    # -- Chinese: leaks -------------------------------------------------------------------------------------
    item("zh-dual-sim", "faq_copies", "如何开启双卡双待？", "在设置的SIM卡管理中打开双卡双待开关",
         ["开放双卡双待、eSIM等功能的设置指引"], [FAQ_ZH]),
    item("zh-water", "faq_copies", "手机进水后还能保修吗", "不能免费保修，可付费维修", ["进水属于人为损坏"], [FAQ_ZH]),
    item("zh-share-expiry", "faq_reformatted", "分享链接可以设置有效期吗?", "可以", ["可以在分享管理中设置提取码和有效期"],
         [("cloud-faq.zh.md",)]),
    item("zh-pro-price", "faq_copies", "星河X10 Pro的首发价格是多少？", "5999元",
         ["星河X10 Pro首发价格为5999元"], [FAQ_ZH]),
    item("zh-human-agent", "faq_copies", "如何联系人工客服？", "在App内点击“我的 > 客服”，或拨打客服电话",
         ["在App内点击“我的 > 客服”"], [HELP_ZH]),
    item("zh-water-pasted", "question_pasted", "星河X10 Pro进水以后还能免费保修吗？", "不能，进水属于人为损坏",
         ["进水属于人为损坏，不在免费保修范围内"], [("training-notes.zh.md",)]),
    item("zh-recycle-answer", "long_answer_copied", "回收站里的文件能保留多久？",
         "回收站中的文件保留30天，30天后会自动彻底删除且无法恢复，请提醒用户及时备份重要文件。",
         ["回收站中的文件保留30天，30天后自动彻底删除，无法恢复。"], [("training-notes.zh.md",)]),
    item("zh-forgot", "faq_verbatim", "忘记密码怎么办？", "通过绑定的手机号重置", ["通过绑定的手机号重置"],
         [("cloud-faq.zh.md",)]),
    item("zh-recycle-keywords", "keyword_as_faq", "回收站文件保留天数", "30天", ["回收站中的文件保留30天"],
         [("cloud-faq.zh.md",)]),
    item("zh-dual-sim-para", "paraphrase_faq", "双卡双待功能要怎么打开？", "在设置的SIM卡管理中打开开关",
         ["开放双卡双待、eSIM等功能的设置指引"], [FAQ_ZH]),
    item("zh-agent-para", "paraphrase_faq", "怎样才能联系到人工客服？", "在App内点击客服或拨打电话",
         ["在App内点击“我的 > 客服”"], [HELP_ZH]),
    item("zh-upgrade-para", "paraphrase_faq", "标准版能不能升级成专业版？", "可以，差价按剩余天数折算",
         ["差价按剩余天数折算"], [("cloud-faq.zh.md",)]),
    # -- Chinese: no leak -----------------------------------------------------------------------------------
    item("zh-price-short", "more_specific", "首发价格是多少？", "3999元", ["星河X10首发价格为3999元"]),
    item("zh-x10-price", "near_miss_name", "星河X10的首发价格是多少？", "3999元", ["星河X10首发价格为3999元"]),
    item("zh-x10-charge", "near_miss_name", "星河X10支持多少瓦快充？", "67瓦有线快充", ["支持67瓦有线快充"]),
    item("zh-x10-refresh", "near_miss_name", "星河X10的屏幕刷新率是多少？", "120Hz", ["星河X10采用120Hz刷新率的屏幕"]),
    item("zh-std-size", "near_miss_name", "标准版单个文件最大可以上传多少？", "4GB", ["标准版单个文件最大4GB"]),
    item("zh-std-space", "near_miss_name", "云盘标准版的存储空间有多大？", "200GB", ["云盘标准版提供200GB存储空间"]),
    item("zh-battery-topic", "topic_in_prose", "星河X10的电池容量", "5000毫安时", ["电池容量为5000毫安时"]),
    item("zh-metro-topic", "topic_in_prose", "深圳地铁14号线全程最高票价", "11元", ["全程最高票价11元"]),
    item("zh-refund-answer", "answer_in_own_evidence", "退款多久能到账？",
         "审核通过后，款项将在三个工作日内原路退回，手续费由平台承担。", ["退款须在购买后七天内申请。"]),
    item("zh-refund-words", "words_in_common", "退款的手续费由谁承担？", "由平台承担", ["手续费由平台承担"]),
    item("zh-dual-sim-power", "other_intent", "开启双卡双待以后会更耗电吗？", "待机耗电略有增加",
         ["开启后待机耗电略有增加"]),
    item("zh-agent-hours", "other_intent", "人工客服几点下班？", "21:00", ["每天9:00-21:00"]),
    item("zh-downgrade", "other_intent", "专业版可以降级回标准版吗？", "未说明", ["适合团队协作"]),
    item("zh-water-repair-cost", "other_intent", "手机进水后付费维修要多少钱？", "未说明", ["可以付费维修"]),
    # -- English: leaks -------------------------------------------------------------------------------------
    item("en-change-plan", "faq_verbatim", "Can I change my plan in the middle of a billing cycle?",
         "Yes, the difference is prorated to the day.", ["the difference is prorated to the day"],
         [("billing-faq.en.md",)]),
    item("en-reset-admin", "faq_reformatted", "how do I reset the admin password", "Hold the reset button for 10 seconds.",
         ["hold the reset button for 10 seconds until the light blinks amber"], [("aurora-faq.en.md",)]),
    item("en-human-agent", "faq_copies", "How do I contact a human agent?", "Use the chat button in the app or call support.",
         ["Use the chat button in the app"], [HELP_EN]),
    item("en-trash-pasted", "question_pasted",
         "How long do deleted files stay in the trash before they are removed for good?", "30 days.",
         ["Deleted files stay in the trash for 30 days"], [("support-notes.en.md",)]),
    item("en-trash-answer", "long_answer_copied", "What happens to deleted files after 30 days?",
         "Deleted files stay in the trash for 30 days. After that they are removed permanently and cannot be restored, "
         "so remind customers to export anything they still need.",
         ["Deleted files stay in the trash for 30 days, then they are removed permanently."],
         [("support-notes.en.md",)]),
    item("en-invoices", "faq_verbatim", "Where can I download past invoices?", "Settings > Billing.",
         ["You can download past invoices from Settings > Billing."], [("billing-faq.en.md",)]),
    item("en-guest-keywords", "keyword_as_faq", "Aurora R7 Max guest network", "Up to two guest networks.",
         ["Yes, up to two guest networks with their own passwords."], [("aurora-faq.en.md",)]),
    item("en-wifi7", "faq_verbatim", "Does the Aurora R7 Max support Wi-Fi 7?", "Yes.", ["It supports Wi-Fi 7 with 320 MHz channels."],
         [("aurora-faq.en.md",)]),
    item("en-invoices-para", "paraphrase_faq", "Where do I find my old invoices to download?", "Settings > Billing.",
         ["You can download past invoices from Settings > Billing."], [("billing-faq.en.md",)]),
    item("en-agent-para", "paraphrase_faq", "How can I reach a real person in support?", "Chat in the app or call.",
         ["Use the chat button in the app"], [HELP_EN]),
    item("en-plan-para", "paraphrase_faq", "Is it possible to switch plans partway through a billing period?",
         "Yes, prorated.", ["the difference is prorated to the day"], [("billing-faq.en.md",)]),
    # -- English: no leak -----------------------------------------------------------------------------------
    item("en-r7-devices", "near_miss_name", "How many devices can the Aurora R7 connect at once?", "64 devices.",
         ["It connects up to 64 devices at once"]),
    item("en-r7-wifi", "near_miss_name", "Does the Aurora R7 support Wi-Fi 7?", "No, Wi-Fi 6.",
         ["The Aurora R7 is a dual-band Wi-Fi 6 router"]),
    item("en-storage-price", "more_specific", "How much does extra storage cost for a team workspace?",
         "$5 per 100 GB per month.", ["additional storage costs $5 per 100 GB per month"]),
    item("en-firmware-topic", "topic_in_prose", "Aurora R7 firmware update schedule", "Monthly.",
         ["Firmware updates for the Aurora R7 are released every month"]),
    item("en-storage-topic", "topic_in_prose", "team workspace storage limit", "1 TB.",
         ["Each team workspace includes 1 TB of storage"]),
    item("en-rates-topic", "topic_in_prose", "central bank benchmark rate decision", "Held at 4.5%.",
         ["The central bank kept its benchmark rate at 4.5% on Thursday."]),
    item("en-pricing-answer", "answer_in_own_evidence", "How much is the Team plan and what does every plan include?",
         PRICING_EN, ["The Team plan costs $12 per user per month, billed yearly."]),
    item("en-reset-r7", "words_in_common", "What happens to the admin password after a reset?",
         "It returns to the one printed on the label.", ["The admin password then returns to the one printed on the label."]),
    item("en-plan-downgrade", "other_intent", "Can I get a refund if I downgrade my plan in the middle of a billing cycle?",
         "Not stated.", ["the difference is prorated to the day"]),
    item("en-agent-hours", "other_intent", "What are the opening hours of the support phone line?", "8am-8pm.",
         ["8am-8pm, every day"]),
    item("en-invoice-email", "other_intent", "Who receives the monthly invoice email?", "The billing contact.",
         ["Invoices are sent to the billing contact on the first day of each month."]),
]


# -- held out: written after the rules were settled on the set above, and never used to change them -----------

AIRLINE_FAQ = """# 乘机常见问题

1. 航班取消后如何办理退票？
在App“我的行程”中选择“退票”，航班取消的可全额退款。

2. 可以携带宠物乘机吗？
小型犬猫可以办理托运，需提前48小时申请。

3. 国际航班提前多久停止值机？
国际航班在起飞前60分钟停止办理值机。
"""
AIRLINE_POLICY = "根据本公司规定，国内航班在起飞前45分钟停止办理值机手续，国际航班在起飞前60分钟停止办理。"
STREAMING = ("Our Basic plan streams in HD on one screen; the Premium plan streams in 4K on four screens. You can "
             "switch plans at any time from Account > Plan.")

HELD_OUT_DOCS = {
    "watch-faq.zh.md": """# 极光手表3 Pro 常见问题

问：极光手表3 Pro的续航时间是多久？
答：典型使用下续航14天。

问：极光手表3 Pro支持血氧检测吗？
答：支持全天候血氧检测。

问：表带可以更换吗？
答：可以，兼容22毫米标准表带。

问：如何把手表恢复出厂设置？
答：在手表的“设置 > 系统 > 恢复出厂”中操作。
""",
    "watch-3.zh.md": """# 极光手表3

极光手表3于9月发布，典型使用下续航10天，支持心率和睡眠监测。很多人关心极光手表3的续航时间，实测重度使用也能坚持一周。

表带采用22毫米快拆设计，可以搭配市面上的标准表带。
""",
    "airline-faq.zh.md": AIRLINE_FAQ,
    "airline-faq-old.zh.md": AIRLINE_FAQ,
    "airline-policy.zh.md": f"# 乘机须知\n\n{AIRLINE_POLICY}\n\n旅客携带宠物乘机需提前48小时向客服申请，并提供检疫证明。\n",
    "airline-help.zh.md": f"# 帮助：值机\n\n{AIRLINE_POLICY}\n\n网上值机可在App中办理。\n",
    "travel-blog.zh.md": """# 出差手记

很多旅客不清楚国内航班停止办理值机手续时间，结果在柜台前被拒。我这次提前两小时到机场，一切顺利。
""",
    "ops-notes.zh.md": """# 热线运营记录

有位旅客在热线里问：航班取消后怎么办理全额退票？我们按流程处理。

参考话术：小型犬猫可以办理托运，需要提前48小时向客服申请，并提供动物检疫证明，否则无法登机。
""",
    "nimbus-faq.en.md": """## Nimbus Z2 Ultra: frequently asked questions

- **How long does the Nimbus Z2 Ultra battery last?** About 30 hours of playback with the case.
- **Is the Nimbus Z2 Ultra waterproof?** It is rated IP68.
- **How do I pair the earbuds with a new phone?** Hold the case button for 5 seconds until the light flashes white.
""",
    "nimbus-z2.en.md": """# Nimbus Z2

The Nimbus Z2 earbuds play for 24 hours with the case. They are rated IP54 against splashes. To pair the earbuds with a new phone, hold the case button for 5 seconds.
""",
    "streaming-help.en.md": f"# Plans\n\n{STREAMING}\n",
    "streaming-help-archive.en.md": f"# Plans (2023)\n\n{STREAMING}\n\nThis page is kept for reference.\n",
    "streaming-faq.en.md": """# Streaming FAQ

Q: Can I watch on several screens at once with the Premium plan?
A: Yes, on up to four screens.

Q: How do I switch plans?
A: From Account > Plan, at any time.
""",
    "community-digest.en.md": """# Community digest

This week people asked how do I pair the earbuds with a new phone, and a moderator answered within minutes. Others discussed Nimbus Z2 battery life in cold weather, which drops by about a fifth.
""",
    "support-macros.en.md": """# Support macros

Suggested reply: The Premium plan streams in 4K on up to four screens at once, and you can switch plans at any time from Account > Plan without losing your watch history.
""",
}

AIRLINE_FAQS = ("airline-faq.zh.md", "airline-faq-old.zh.md")

HELD_OUT_ITEMS = [
    item("h-zh-reset", "faq_verbatim", "如何把手表恢复出厂设置？", "在设置的系统菜单中恢复出厂", ["在手表的“设置 > 系统 > 恢复出厂”中操作"],
         [("watch-faq.zh.md",)]),
    item("h-zh-pet", "faq_reformatted", "可以携带宠物乘机吗?", "可以托运小型犬猫", ["旅客携带宠物乘机需提前48小时向客服申请"],
         [AIRLINE_FAQS]),
    item("h-zh-intl", "faq_copies", "国际航班提前多久停止值机？", "起飞前60分钟", ["国际航班在起飞前60分钟停止办理。"],
         [AIRLINE_FAQS]),
    item("h-zh-refund-pasted", "question_pasted", "航班取消后怎么办理全额退票？", "在我的行程中选择退票",
         ["航班取消的可全额退款"], [("ops-notes.zh.md",), AIRLINE_FAQS]),
    item("h-zh-pet-answer", "long_answer_copied", "宠物托运需要提前多久申请？",
         "小型犬猫可以办理托运，需要提前48小时向客服申请，并提供动物检疫证明，否则无法登机。",
         ["旅客携带宠物乘机需提前48小时向客服申请，并提供检疫证明。"], [("ops-notes.zh.md",)]),
    item("h-zh-reset-para", "paraphrase_faq", "手表怎么恢复到出厂状态？", "在设置的系统菜单中恢复出厂",
         ["在手表的“设置 > 系统 > 恢复出厂”中操作"], [("watch-faq.zh.md",)]),
    item("h-zh-refund-para", "paraphrase_faq", "航班被取消了，票要怎么退？", "在我的行程中选择退票", ["航班取消的可全额退款"],
         [AIRLINE_FAQS]),
    item("h-zh-strap-para", "paraphrase_faq", "表带能不能换？", "可以，兼容22毫米表带", ["表带采用22毫米快拆设计"],
         [("watch-faq.zh.md",)]),
    item("h-zh-3-battery", "near_miss_name", "极光手表3的续航时间是多久？", "10天", ["典型使用下续航10天"]),
    item("h-zh-3-spo2", "near_miss_name", "极光手表3支持血氧检测吗？", "未说明", ["支持心率和睡眠监测"]),
    item("h-zh-battery-short", "more_specific", "续航时间是多久？", "10天", ["典型使用下续航10天"]),
    item("h-zh-checkin-topic", "topic_in_prose", "国内航班停止办理值机手续时间", "起飞前45分钟",
         ["国内航班在起飞前45分钟停止办理值机手续"]),
    item("h-zh-battery-topic", "topic_in_prose", "极光手表3的续航时间", "10天", ["典型使用下续航10天"]),
    item("h-zh-checkin-answer", "answer_in_own_evidence", "值机截止时间国内和国际航班有什么不同？",
         "国内航班在起飞前45分钟停止办理值机手续，国际航班在起飞前60分钟停止办理。", ["国际航班在起飞前60分钟停止办理。"]),
    item("h-zh-face", "other_intent", "极光手表3 Pro的表盘可以自定义吗？", "未说明", ["支持全天候血氧检测"]),
    item("h-zh-pet-fee", "other_intent", "宠物托运要收费吗？", "未说明", ["需提前48小时申请"]),
    item("h-zh-compensation", "other_intent", "航班取消后会有赔偿吗？", "未说明", ["航班取消的可全额退款"]),
    item("h-en-switch", "faq_verbatim", "How do I switch plans?", "From Account > Plan.",
         ["You can switch plans at any time from Account > Plan."], [("streaming-faq.en.md",)]),
    item("h-en-pair-pasted", "question_pasted", "How do I pair the earbuds with a new phone?",
         "Hold the case button for 5 seconds.", ["hold the case button for 5 seconds"],
         [("community-digest.en.md",), ("nimbus-faq.en.md",)]),
    item("h-en-waterproof", "faq_reformatted", "is the nimbus z2 ultra waterproof", "IP68.", ["It is rated IP68."],
         [("nimbus-faq.en.md",)]),
    item("h-en-premium-answer", "long_answer_copied", "What does the Premium plan include?",
         "The Premium plan streams in 4K on up to four screens at once, and you can switch plans at any time from "
         "Account > Plan without losing your watch history.", ["the Premium plan streams in 4K on four screens"],
         [("support-macros.en.md",)]),
    item("h-en-switch-para", "paraphrase_faq", "What's the procedure for changing my plan?", "From Account > Plan.",
         ["You can switch plans at any time from Account > Plan."], [("streaming-faq.en.md",)]),
    item("h-en-screens-para", "paraphrase_faq", "Can the Premium plan be used on more than one screen at the same time?",
         "Yes, up to four.", ["the Premium plan streams in 4K on four screens"], [("streaming-faq.en.md",)]),
    item("h-en-z2-battery", "near_miss_name", "How long does the Nimbus Z2 battery last?", "24 hours with the case.",
         ["The Nimbus Z2 earbuds play for 24 hours with the case."]),
    item("h-en-z2-waterproof", "near_miss_name", "Is the Nimbus Z2 waterproof?", "Splash resistant, IP54.",
         ["They are rated IP54 against splashes."]),
    item("h-en-screens", "more_specific", "Can I watch on several screens at once?", "Depends on the plan.",
         ["the Premium plan streams in 4K on four screens"]),
    item("h-en-cold-topic", "topic_in_prose", "Nimbus Z2 battery life in cold weather", "Drops by about a fifth.",
         ["The Nimbus Z2 earbuds play for 24 hours with the case."]),
    item("h-en-plans-answer", "answer_in_own_evidence", "What are the Basic and Premium plans?",
         "Our Basic plan streams in HD on one screen; the Premium plan streams in 4K on four screens.",
         ["Our Basic plan streams in HD on one screen"]),
    item("h-en-wireless", "other_intent", "Does the Nimbus Z2 Ultra support wireless charging?", "Not stated.",
         ["It is rated IP68."]),
    item("h-en-premium-price", "other_intent", "How much does the Premium plan cost?", "Not stated.",
         ["the Premium plan streams in 4K on four screens"]),
    item("h-en-share", "other_intent", "Can I share my Premium plan with people outside my household?", "Not stated.",
         ["the Premium plan streams in 4K on four screens"]),
]
