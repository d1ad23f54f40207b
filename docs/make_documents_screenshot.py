"""Screenshot of the Documents view for the README: a search active and a document open.

Fills a document store in temporary folders with memories and documents of the kind agents
write — English and Chinese, tagged, most written by agents in runs and a few by hand — then
opens the real window on the Documents view, types a search, selects a result and captures the
screen::

    Xvfb :94 -screen 0 1400x900x24 &
    DISPLAY=:94 .venv/bin/python docs/make_documents_screenshot.py [OUTPUT.png] [--history]

The capture is ``import -window root`` (ImageMagick) when available, else the window's own
grab; the default output is ``docs/screenshots/documents.png``. With ``--history`` the open
document has been edited by a person and then by an agent, and the shot shows its History
(versions, the selected one's diff, Restore); default output
``docs/screenshots/documents-history.png``.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from docs.screenshot_support import open_window, save_screen, scratch_home  # noqa: E402

SCRATCH = scratch_home("baton-docs-demo")

from PySide6.QtCore import QTimer  # noqa: E402

from core.documents.store import DocumentProvenance, DocumentStore, NewDocument  # noqa: E402
from gui.app import create_application  # noqa: E402
from gui.documents.documents_view import DocumentsView  # noqa: E402
from gui.qt_asyncio import run_event_loop  # noqa: E402

SEARCH = "登录"
OPEN = "登录与会话：实现笔记"
HISTORY_SEARCH = "login"
HISTORY_OPEN = "Session tokens rotate on every login"

LOGIN_NOTES = """\
登录流程由 `auth/session.py` 处理：表单提交到 `/api/session`，成功后写入 **HttpOnly** cookie。

## 关键点

- 密码错误 **5 次**后锁定账户 15 分钟（`LOCKOUT_MINUTES`）。
- 刷新令牌保存在系统钥匙串里，不写入磁盘。
- 第三方登录（GitHub、Google）走 OAuth 2.0 PKCE，回调地址见 `config/oauth.yaml`。

## 待办

1. 给 `/api/session` 加速率限制（每 IP 每分钟 10 次）。
2. 登录失败的日志里不要出现邮箱全文。

```python
def lock_out(user: User) -> None:
    user.locked_until = now() + timedelta(minutes=LOCKOUT_MINUTES)
```

> 参考：run 里 reviewer 指出旧实现会在并发登录时重复发放令牌。
"""

DOCUMENTS: list[tuple[str, str, list[str], str, str, int | None, float]] = [
    # title, type, tags, content, agent ("" = by hand), step, hours ago
    (OPEN, "memory", ["auth", "登录", "backend"], LOGIN_NOTES, "scout", 1, 0.05),
    ("Login page: error messages", "document", ["auth", "ux"],
     "The login form shows one message for a wrong e-mail *or* password, never which one was "
     "wrong. After the third failure it offers the reset link. "
     "登录失败提示统一为“邮箱或密码错误”。",
     "worker", 2, 0.6),
    ("单点登录（SSO）方案对比", "document", ["auth", "sso", "调研"],
     "比较了 SAML 与 OIDC 两种单点登录方案：OIDC 与现有 OAuth 流程共用代码更多，推荐 OIDC。"
     "\n\n| 方案 | 优点 | 缺点 |\n|---|---|---|\n| SAML | 企业支持广 | XML 复杂 |\n"
     "| OIDC | 轻量 | 旧系统支持少 |", "planner", 1, 3),
    ("Session tokens rotate on every login", "memory", ["auth", "security"],
     "Refresh tokens are single-use: each login or refresh issues a new pair and revokes the "
     "old one. Reuse of a revoked token logs every session of that user out.", "reviewer", 3, 5),
    ("扫码登录的轮询间隔", "memory", ["mobile", "登录"],
     "桌面端扫码登录每 2 秒轮询一次 `/api/qr/status`，二维码 120 秒过期。", "scout", 1, 20),
    ("Release checklist 0.4", "document", ["release"],
     "1. Bump the version\n2. Build the bundle\n3. Smoke-test on a clean VM\n4. Tag and publish",
     "", None, 26),
    ("数据库迁移计划", "document", ["数据库", "migration"],
     "先备份，再在预发布环境运行迁移脚本，确认索引重建时间小于 5 分钟后再上线。", "planner", 2, 30),
    ("Flaky test: test_upload_resume", "memory", ["tests", "ci"],
     "Fails when the temp folder is on tmpfs: the resume offset is read before fsync.",
     "worker", 2, 50),
    ("API naming conventions", "document", ["api", "review"],
     "Plural nouns for collections (`/users`), no verbs in paths, `snake_case` fields.",
     "reviewer", 1, 70),
    ("用户反馈汇总（三月）", "document", ["feedback", "ux"],
     "最常见的三条反馈：登录太慢、导出缺少 CSV、深色模式下表格看不清。", "", None, 90),
    ("Cache headers for static assets", "memory", ["performance", "frontend"],
     "Hashed file names, so `Cache-Control: max-age=31536000, immutable` is safe.",
     "scout", 1, 120),
    ("Prefer ripgrep over grep", "memory", ["tools"],
     "rg respects .gitignore and is ~10x faster on this repo.", "", None, 200),
]  # fmt: skip


def fill(store: DocumentStore) -> None:
    now = datetime.now(UTC)
    runs = ["20250611-093012-4be1c7", "20250611-141502-a90f3d", "20250610-172233-7c21e8"]
    rows = []
    for number, (title, doc_type, tags, content, agent, step, hours) in enumerate(DOCUMENTS):
        provenance = DocumentProvenance()
        if agent:
            provenance = DocumentProvenance(
                run_id=runs[number % len(runs)], step=step, agent=agent, call_id=f"call_{number}"
            )
        updated = now - timedelta(hours=hours)
        rows.append(
            NewDocument(
                title=title,
                type=doc_type,
                tags=tags,
                content=content,
                provenance=provenance,
                created=updated - timedelta(hours=2),
                updated=updated,
            )
        )
    store.create_many(reversed(rows))


def edit_twice(store: DocumentStore) -> None:
    """A person's edit, then an agent's that weakens the note: the ``--history`` shot."""
    (hit,) = [h for h in store.search(HISTORY_OPEN).items if h.title == HISTORY_OPEN]
    text = store.get(hit.id, full=True).content or ""
    text = (
        store.update(
            hit.id, content=text + "\n\nThe revocation is logged with the client's IP address."
        ).content
        or ""
    )
    agent = DocumentProvenance(
        run_id="20250612-101544-d41f0a", step=2, agent="worker", call_id="call_7"
    )
    store.update(
        hit.id,
        content=text.replace(
            "Reuse of a revoked token logs every session of that user out.",
            "Reuse of a revoked token is ignored.",
        ),
        tags=["auth"],
        author=agent,
    )


def main() -> int:
    history = "--history" in sys.argv
    names = [arg for arg in sys.argv[1:] if arg != "--history"]
    default = "documents-history.png" if history else "documents.png"
    output = Path(names[0]) if names else ROOT / "docs/screenshots" / default
    with DocumentStore() as store:
        fill(store)
        if history:
            edit_twice(store)
    app = create_application([])
    window = open_window(SCRATCH, "documents", 1400, 900)
    view = window.stack.currentWidget()
    assert isinstance(view, DocumentsView)
    view.splitter.setSizes([390, 470])

    def search() -> None:
        view.filters.search_field.setText(HISTORY_SEARCH if history else SEARCH)

    def select() -> None:
        titles = [hit.title for hit in view.model.hits()]
        view.table.selectRow(titles.index(HISTORY_OPEN if history else OPEN))
        view.table.setFocus()
        if history:
            QTimer.singleShot(300, show_history)

    def show_history() -> None:
        view.detail.header.history_button.click()
        view.detail.history.versions_list.setCurrentRow(1)

    def capture() -> None:
        save_screen(window, output)
        view.shutdown()
        window.close()
        app.quit()

    QTimer.singleShot(300, search)
    QTimer.singleShot(900, select)
    QTimer.singleShot(1800, capture)
    return run_event_loop(app)


if __name__ == "__main__":
    sys.exit(main())
