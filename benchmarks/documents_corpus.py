"""The generated collection ``benchmarks/documents.py`` searches: English, Chinese, Japanese
and mixed text between 200 and 3,000 characters, from the word lists below with a seeded RNG
(word frequencies follow Zipf's law, as in real text), no downloads.
"""

from __future__ import annotations

import collections
import concurrent.futures
import itertools
import math
import random
from collections.abc import Iterator

from core.documents.store import NewDocument

_FILLER_TEXT = """
the of and to a in is that for it with as on be by this are at from or an not we can will has
have but which when all if more one also each into than then its they there should must only
after before so no our their these those
"""
ENGLISH_FILLER = _FILLER_TEXT.split()

ENGLISH_TOPICS = """system user data file agent model server client request response error message
document memory search index query result page table column value field record version update
delete create read write build test deploy release config setting option feature module package
library function method class object interface type string number list array map key token
session login password account profile permission role policy approval review plan task step
chain run output input stream event log trace metric report chart graph node edge network
socket port host address domain proxy cache storage disk folder path image video audio text
font color theme window dialog button menu panel widget layout screen display render view
editor cursor selection scroll keyboard mouse shortcut command terminal shell script process
thread queue worker job schedule timer clock date time zone language locale translation
encoding unicode character word sentence paragraph summary title label tag category filter
sort order rank score weight limit budget cost price payment invoice order customer vendor
product catalog inventory shipment delivery address billing refund discount coupon campaign
email notification alert warning failure timeout retry backoff fallback recovery backup
restore migration schema database transaction commit rollback lock conflict merge branch
patch diff blame history archive snapshot checkpoint replica cluster shard partition region
latency throughput bandwidth capacity memory processor kernel driver device sensor battery
power energy signal frequency channel protocol packet frame header payload checksum hash
signature certificate encryption decryption secret credential vault audit compliance privacy
security vulnerability exploit firewall gateway router balancer container image registry
pipeline workflow trigger webhook callback handler listener observer publisher subscriber
adapter bridge facade factory builder singleton prototype strategy visitor iterator generator
parser lexer compiler interpreter runtime virtual machine garbage collector allocator pointer
reference variable constant parameter argument return exception assertion invariant contract
specification requirement design architecture component service microservice monolith
prototype experiment hypothesis analysis insight dashboard spreadsheet formula cell sheet
workbook presentation slide template draft revision comment feedback reviewer author editor
publisher article chapter section heading footnote citation bibliography glossary appendix
meeting agenda minutes decision action owner deadline milestone roadmap sprint backlog story
estimate velocity retrospective standup incident outage postmortem escalation runbook oncall
customer support ticket priority severity resolution satisfaction survey interview persona
journey onboarding signup checkout cart wishlist recommendation personalization experiment
variant cohort retention churn growth revenue margin forecast quarter annual fiscal budget
hiring candidate offer salary bonus equity benefit vacation policy handbook training course
lesson quiz exam grade student teacher school campus library research paper thesis
laboratory sample measurement calibration instrument accuracy precision tolerance defect
quality inspection factory assembly supplier logistics warehouse forklift pallet container
weather forecast temperature humidity rainfall wind storm flood drought harvest farm crop
garden kitchen recipe ingredient flavor spice dinner breakfast lunch coffee tea bakery bread
travel flight hotel booking itinerary passport visa luggage airport station train ticket
museum gallery painting sculpture concert orchestra melody rhythm guitar piano violin drum
football basketball tennis swimming marathon cycling stadium coach player referee trophy
mountain river forest desert ocean island valley canyon glacier volcano meadow lake beach
planet galaxy telescope orbit satellite rocket launch mission astronaut gravity comet star
medicine doctor nurse hospital clinic patient diagnosis therapy vaccine symptom prescription
lawyer contract agreement clause lawsuit court judge verdict appeal regulation license patent
bicycle motorcycle vehicle engine brake wheel tire fuel electric charger highway bridge tunnel
"""

CHINESE_FILLER = list("的了和是在把被与对也都就而及或并从向将")

CHINESE_2_TOPICS = """
登录 注册 用户 密码 数据 文件 系统 服务 接口 模型 代理 任务 计划 审查 文档 记忆
搜索 索引 查询 结果 页面 表格 字段 记录 版本 更新 删除 创建 读取 写入 构建 测试 部署 发布
配置 设置 选项 功能 模块 依赖 函数 方法 对象 类型 字符 数字 列表 数组 映射 令牌 会话 账户
权限 角色 策略 审批 步骤 链条 运行 输出 输入 事件 日志 追踪 指标 报告 图表 节点 网络 端口
主机 地址 域名 缓存 存储 磁盘 目录 路径 图片 视频 音频 文本 字体 颜色 主题 窗口 对话 按钮
菜单 面板 布局 屏幕 显示 渲染 视图 编辑 光标 滚动 键盘 鼠标 快捷 命令 终端 脚本 进程 线程
队列 作业 调度 时钟 日期 时间 时区 语言 翻译 编码 句子 段落 摘要 标题 标签 分类 过滤 排序
排名 评分 权重 限制 预算 成本 价格 支付 发票 订单 客户 产品 目录 库存 发货 配送 退款 折扣
优惠 活动 邮件 通知 警告 失败 超时 重试 恢复 备份 迁移 事务 提交 回滚 冲突 合并 分支 补丁
历史 归档 快照 副本 集群 分片 分区 区域 延迟 吞吐 带宽 容量 内存 内核 驱动 设备 电池 电源
能源 信号 频率 通道 协议 报文 校验 哈希 签名 证书 加密 解密 密钥 审计 合规 隐私 安全 漏洞
防火 网关 路由 容器 镜像 流程 触发 回调 监听 观察 发布 订阅 适配 桥接 工厂 单例 原型 迭代
解析 编译 变量 常量 参数 异常 断言 契约 规范 需求 设计 架构 组件 实验 假设 分析 洞察 仪表
公式 单元 模板 草稿 修订 评论 反馈 作者 编辑 文章 章节 标题 脚注 引用 附录 会议 议程 纪要
决策 行动 负责 截止 里程 路线 迭代 估算 速度 回顾 事故 故障 复盘 升级 值班 工单 优先 严重
满意 调查 访谈 用户 旅程 入职 结账 推荐 个性 留存 增长 收入 利润 预测 季度 年度 财务 招聘
候选 薪资 奖金 股权 福利 假期 培训 课程 考试 成绩 学生 老师 学校 校园 研究 论文 实验 样本
测量 校准 仪器 精度 缺陷 质量 检验 工厂 装配 供应 物流 仓库 天气 温度 湿度 降雨 风暴 洪水
干旱 收获 农场 花园 厨房 食谱 配料 味道 晚餐 早餐 午餐 咖啡 茶叶 面包 旅行 航班 酒店 预订
行程 护照 签证 行李 机场 车站 火车 门票 博物 画廊 绘画 雕塑 音乐 旋律 节奏 吉他 钢琴 足球
篮球 网球 游泳 骑行 体育 教练 球员 裁判 奖杯 山脉 河流 森林 沙漠 海洋 岛屿 山谷 冰川 火山
湖泊 海滩 行星 银河 卫星 火箭 发射 引力 彗星 星星 医生 护士 医院 诊所 病人 诊断 治疗 疫苗
症状 律师 合同 协议 条款 诉讼 法院 法官 判决 上诉 法规 许可 专利 车辆 引擎 刹车 车轮 轮胎
燃料 电动 充电 公路 桥梁 隧道"""

CHINESE_4_TOPICS = """
数据分析 用户体验 系统架构 性能优化 安全漏洞 版本控制 持续集成 自动部署 负载均衡
分布式系统 消息队列 缓存策略 权限管理 身份验证 错误处理 日志记录 单元测试 集成测试 代码审查
需求分析 项目管理 风险评估 成本控制 质量保证 客户服务 市场营销 产品设计 人工智能 机器学习
深度学习 自然语言 计算机视觉 知识图谱 推荐系统 搜索引擎 数据仓库 实时计算 批量处理 流式处理
云计算平台 容器编排 微服务架构 接口文档 技术债务 重构计划 故障恢复 灾难备份 监控告警 容量规划
开源社区 用户反馈 功能迭代 界面设计 交互设计 移动应用 网页开发 数据库设计 索引优化 查询优化
事务隔离 并发控制 死锁检测 内存泄漏 垃圾回收 线程安全 异步编程 事件驱动 响应式设计 国际化
本地化支持 字符编码 全文搜索 中文分词 向量检索 语义搜索 文本摘要 情感分析 机器翻译 语音识别
一丝不苟 循序渐进 事半功倍 精益求精 与时俱进 实事求是 脚踏实地 集思广益 取长补短 因地制宜
"""


def topics(block: str, lines_per_topic: int) -> list[list[str]]:
    """Each few lines of a word list are one subject (weather, payments, 数据库...)."""
    lines = [line.split() for line in block.strip().splitlines()]
    return [
        [word for line in lines[i : i + lines_per_topic] for word in line]
        for i in range(0, len(lines), lines_per_topic)
    ]


ENGLISH_BY_TOPIC = topics(ENGLISH_TOPICS, 2)
CHINESE_BY_TOPIC = topics(CHINESE_2_TOPICS, 1) + topics(CHINESE_4_TOPICS, 1)
ENGLISH = sorted({w for topic in ENGLISH_BY_TOPIC for w in topic})
CHINESE_2 = sorted({w for w in CHINESE_2_TOPICS.split()})
CHINESE_4 = sorted({w for w in CHINESE_4_TOPICS.split()})

JAPANESE_TOPICS = """
ログイン パスワード ユーザー アカウント セッション トークン 認証 設定 画面 ボタン
データベース テーブル インデックス 検索 クエリ 結果 ページ 更新 削除 作成
サーバー クライアント リクエスト レスポンス エラー メッセージ タイムアウト 再試行
テスト ビルド デプロイ リリース バージョン ブランチ マージ レビュー 修正 変更
会議 議事録 予定 締め切り 担当 進捗 報告 確認 相談 連絡
天気 旅行 料理 写真 音楽 映画 図書館 公園 電車 駅
"""
JAPANESE_FILLER = list("のをにはがとでもへや")
JAPANESE_BY_TOPIC = topics(JAPANESE_TOPICS, 1)
JAPANESE = sorted({w for w in JAPANESE_TOPICS.split()})
TOPICAL = 0.7
"""Share of a document's words drawn from its two subjects; the rest come from everywhere, by
Zipf's law. Real collections are bursty like this: "forecast" fills weather notes and is rare
elsewhere, so a keyword matches a minority of documents rather than a random half."""


class Vocabulary:
    def __init__(self, by_topic: list[list[str]], rng: random.Random) -> None:
        self.topics = by_topic
        self.words = sorted({word for topic in by_topic for word in topic})
        rng.shuffle(self.words)  # how common a word is must not follow the list's order
        self.cumulative = list(
            itertools.accumulate(1.0 / rank for rank in range(1, len(self.words) + 1))
        )

    def pick(self, rng: random.Random, subjects: list[list[str]], count: int) -> list[str]:
        topical = round(count * TOPICAL)
        words = rng.choices(subjects[0] + subjects[1], k=topical)
        words += rng.choices(self.words, cum_weights=self.cumulative, k=count - topical)
        rng.shuffle(words)
        return words


class TextMaker:
    """Deterministic text from the word lists: subject words, Zipf background, fillers."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.english = Vocabulary(ENGLISH_BY_TOPIC, self.rng)
        self.chinese = Vocabulary(CHINESE_BY_TOPIC, self.rng)
        self.japanese = Vocabulary(JAPANESE_BY_TOPIC, self.rng)
        self.subjects_en: list[list[str]] = []
        self.subjects_zh: list[list[str]] = []
        self.subjects_ja: list[list[str]] = []

    def english_sentence(self) -> str:
        rng = self.rng
        n = rng.randint(6, 18)
        words = self.english.pick(rng, self.subjects_en, n)
        for _ in range(n // 3):
            words.insert(rng.randrange(len(words)), rng.choice(ENGLISH_FILLER))
        return " ".join(words).capitalize() + rng.choice(".....?!")

    def chinese_sentence(self) -> str:
        rng = self.rng
        n = rng.randint(4, 12)
        words = self.chinese.pick(rng, self.subjects_zh, n)
        for _ in range(n // 3):
            words.insert(rng.randrange(len(words)), rng.choice(CHINESE_FILLER))
        text = "".join(words[: n // 2]) + "，" + "".join(words[n // 2 :])
        return text + rng.choice("。。。？！")

    def japanese_sentence(self) -> str:
        rng = self.rng
        words = self.japanese.pick(rng, self.subjects_ja, rng.randint(3, 8))
        text = "".join(word + rng.choice(JAPANESE_FILLER) for word in words)
        return text + rng.choice("。。。？")

    def mixed_sentence(self) -> str:
        rng = self.rng
        english = self.english.pick(rng, self.subjects_en, rng.randint(1, 2))
        chinese = self.chinese_sentence()
        at = rng.randrange(len(chinese))
        return chinese[:at] + " " + " ".join(english) + " " + chinese[at:]

    def document(self) -> NewDocument:
        rng = self.rng
        self.subjects_en = rng.sample(self.english.topics, 2)
        self.subjects_zh = rng.sample(self.chinese.topics, 2)
        self.subjects_ja = rng.sample(self.japanese.topics, 2)
        kind = rng.random()
        make = (
            self.english_sentence
            if kind < 0.42
            else self.chinese_sentence
            if kind < 0.75
            else self.japanese_sentence
            if kind < 0.87
            else self.mixed_sentence
        )
        # Log-uniform between 200 and 3,000 characters: most notes are short, a few are long.
        target = int(math.exp(rng.uniform(math.log(200), math.log(3000))))
        parts: list[str] = []
        length = 0
        while length < target:
            sentence = make()
            parts.append(sentence)
            length += len(sentence) + 1
            if rng.random() < 0.15:
                parts.append("\n\n")
        content = " ".join(parts)[:target]
        title = make().rstrip(".?!。？！")[:60]
        tags = rng.sample(["plan", "review", "bug", "spec", "notes", "登录", "设计", "api"], 2)
        return NewDocument(
            title=title,
            content=content,
            type="memory" if rng.random() < 0.3 else "document",
            tags=tags,
        )


BATCH = 5_000


def batch_of_documents(seed: int, index: int, count: int) -> list[NewDocument]:
    """Batch ``index`` of the collection: its own seed, so batches can be made in any process
    and the collection is the same whichever made them."""
    maker = TextMaker(seed * 1_000_003 + index)
    return [maker.document() for _ in range(count)]


def batches(total: int, seed: int, start: int = 0) -> Iterator[list[NewDocument]]:
    """Every batch from ``start``, generated one ahead in a second process while the caller
    stores the current one (text generation is a third of the build's time)."""
    counts = [min(BATCH, total - i * BATCH) for i in range(math.ceil(total / BATCH))]
    with concurrent.futures.ProcessPoolExecutor(max_workers=1) as pool:
        pending: collections.deque[concurrent.futures.Future[list[NewDocument]]] = (
            collections.deque()
        )
        for index in range(start, len(counts)):
            pending.append(pool.submit(batch_of_documents, seed, index, counts[index]))
            if len(pending) > 1:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
