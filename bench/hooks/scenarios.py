"""The tool-time scenarios: a rule or fact stored in one session, and a later session whose tool
call it concerns (bench/hooks/tool_time.py runs them through Claude Code's CLI).

Written before any tool-time hook existed, and not changed to suit one (issue 35): 40 scenarios,
each an agent's short trajectory as a real one goes (it reads a file before it edits it, looks at
a folder's sibling before it writes a new file there, runs a command, retries after a failure),
and 40 unrelated calls, one before each scenario's own calls, that no stored memory concerns.

- `edit`: the memory names a file, a folder or a file name; the session reads the file, then
  edits it. The relevant call is the edit.
- `write`: the memory names a folder; the session reads a file there, then writes a new one.
  The relevant call is the write.
- `command`: the memory warns about a command; the session runs something first (related or
  not), then that command. The relevant call is the command.
- `failure`: the memory explains an error; the session runs a command that fails with it, then
  the fix. The relevant call is the fix.

A scenario is counted when its memory is in the model's request whose answer is the relevant
call (the memory reached the model before it made that call). `applies_to` is what the storing
agent declared the memory applies to, when it declared anything (about half do); `marker` is a
phrase of the memory looked for in the requests. Commands run through shims (`outputs`: a
command's first words, its exit code, stdout and stderr), so nothing real is deployed or deleted.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Call:
    """A tool call of the fake model: a Claude Code tool and its input, paths relative to the project."""

    tool: str
    input: dict[str, object]


def read(path: str) -> Call:
    return Call("Read", {"file_path": path})


def edit(path: str, old: str, new: str) -> Call:
    return Call("Edit", {"file_path": path, "old_string": old, "new_string": new})


def write(path: str, content: str) -> Call:
    return Call("Write", {"file_path": path, "content": content})


def bash(command: str, description: str) -> Call:
    return Call("Bash", {"command": command, "description": description})


@dataclass(frozen=True)
class Scenario:
    id: str
    kind: str
    memory: str
    marker: str
    prompt: str
    calls: tuple[Call, ...]
    #: Index in `calls` of the call the memory concerns.
    relevant: int
    applies_to: tuple[str, ...] = ()
    #: Files the project holds before the session (path relative to the project: text).
    files: dict[str, str] = field(default_factory=dict)
    #: Shimmed commands: a command line's first words -> its answers in turn (exit code, stdout, stderr),
    #: the last one repeating; the longest matching prefix answers.
    outputs: dict[str, tuple[tuple[int, str, str], ...]] = field(default_factory=dict)


REFUND_PY = '''from decimal import Decimal

from services.billing import ledger


def partial_refund(charge, amount: Decimal) -> None:
    """Refund part of a charge."""
    ledger.add_charge(charge.customer_id, -amount)
'''

CLIENT_TS = """export async function call(path: string, init: RequestInit = {}) {
  const headers = { ...init.headers, "X-Request-Id": crypto.randomUUID() };
  return fetch(`/api${path}`, { ...init, headers });
}
"""

SESSION_GO = """package auth

func Valid(presented, stored string) bool {
	if presented == "" {
		return false
	}
	return presented == stored
}
"""

PARSER_RS = """pub fn parse_line(line: &str) -> Result<Record, ParseError> {
    let fields: Vec<&str> = line.split(',').collect();
    Ok(Record { id: fields[0].parse().unwrap(), name: fields[1].to_string() })
}
"""

CURRENCY_JAVA = """package com.harbor.payments;

import java.math.BigDecimal;
import java.math.RoundingMode;

public final class CurrencyFormatter {
    public static String format(BigDecimal amount, String currency) {
        return amount.setScale(2, RoundingMode.HALF_EVEN).toPlainString() + " " + currency;
    }
}
"""

MIGRATION_SQL = """-- 0042: speed up the invoice list
CREATE INDEX invoice_customer_idx ON invoice (customer_id);
"""

RELEASE_YML = """name: release
on:
  push:
    tags: ["v*"]
jobs:
  publish:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@8e5e7e5ab8b370d6c329ec480221332ada57f0ab
      - uses: actions/setup-node@1a4442cacd436585916779262731d5b162bc6ec7
        with:
          node-version: 20
"""

DOCKERFILE = """FROM registry.harbor.internal/python:3.12-slim
WORKDIR /app
COPY . .
RUN pip install --no-cache-dir -r requirements.txt
CMD ["python", "-m", "harbor"]
"""

DEPLOY_GUIDE_KO = """# 배포 가이드

1. 릴리스 브랜치를 만든다.
2. 스테이징에 배포하고 스모크 테스트를 돌린다.
3. 운영에 배포한다.
"""

REFUND_KO_PY = '''def 환불_수수료(금액: int, 비율: float) -> int:
    """환불 수수료를 계산한다."""
    return 금액 * 비율
'''

SETTINGS_PY = """import os

DEBUG = False
DATABASE_URL = os.environ["DATABASE_URL"]
"""

MAIN_ACTIVITY_KT = """package com.harbor.app

class MainActivity : AppCompatActivity() {
    override fun onCreate(savedInstanceState: Bundle?) {
        super.onCreate(savedInstanceState)
        setContentView(R.layout.activity_main)
    }
}
"""

ORDERS_PROTO = """syntax = "proto3";
package orders.v1;

message Order {
  string id = 1;
  int64 amount_cents = 2;
  string legacy_status = 3;
  string status = 4;
}
"""

BUCKET_TF = """resource "aws_s3_bucket" "this" {
  bucket = var.name
}

resource "aws_s3_bucket_public_access_block" "this" {
  bucket                  = aws_s3_bucket.this.id
  block_public_acls       = true
  block_public_policy     = true
}
"""

USERS_GO = """package handlers

import "net/http"

func Users(w http.ResponseWriter, r *http.Request) {
	w.Write([]byte("[]"))
}
"""

TEST_IMPORT_PY = """def test_import_accepts_a_csv(client, tmp_tenant):
    response = client.post("/import", files={"file": ("a.csv", b"id\\n1\\n")}, headers=tmp_tenant)
    assert response.status_code == 200
"""

START_KO_MD = """> 원문: docs/en/getting-started.md

# 시작하기

설치가 끝나면 `harbor init` 을 실행한다.
"""

BUTTON_TSX = """export function Button({ label }: { label: string }) {
  return <button className="btn">{label}</button>;
}
"""


SCENARIOS: tuple[Scenario, ...] = (
    # ------------------------------------------------------------------ edits of a file a memory names
    Scenario(
        "edit-python-refund",
        "edit",
        "Partial refunds in services/billing/refund.py must call ledger.reverse_entry() rather than adding a "
        "negative charge; finance reconciles on reverse entries only.",
        "finance reconciles on reverse entries only",
        "Partial refunds show the wrong amount on the customer's statement. Can you fix it?",
        (
            read("services/billing/refund.py"),
            edit(
                "services/billing/refund.py",
                "ledger.add_charge(charge.customer_id, -amount)",
                "ledger.refund(charge, amount)",
            ),
        ),
        1,
        applies_to=("services/billing/refund.py",),
        files={"services/billing/refund.py": REFUND_PY},
    ),
    Scenario(
        "edit-typescript-client",
        "edit",
        "The API client in web/src/api/client.ts must keep the X-Request-Id header on every call: support "
        "traces tickets by it.",
        "support traces tickets by it",
        "Add a ten second timeout to our fetch wrapper.",
        (
            read("web/src/api/client.ts"),
            edit(
                "web/src/api/client.ts",
                "return fetch(`/api${path}`, { ...init, headers });",
                "return fetch(`/api${path}`, { ...init, signal: AbortSignal.timeout(10000) });",
            ),
        ),
        1,
        files={"web/src/api/client.ts": CLIENT_TS},
    ),
    Scenario(
        "edit-go-session",
        "edit",
        "Session tokens in internal/auth/session.go are compared with subtle.ConstantTimeCompare; a plain == was "
        "flagged in the last security audit.",
        "flagged in the last security audit",
        "Refactor the token check so it returns early and reads better.",
        (
            read("internal/auth/session.go"),
            edit("internal/auth/session.go", "return presented == stored", "return stored == presented"),
        ),
        1,
        applies_to=("internal/auth/",),
        files={"internal/auth/session.go": SESSION_GO},
    ),
    Scenario(
        "edit-rust-parser",
        "edit",
        "crates/ingest/src/parser.rs must never panic on malformed input: return a ParseError, because the ingest "
        "daemon restarts on a panic and drops its queue.",
        "restarts on a panic and drops its queue",
        "Handle empty lines in the CSV parser.",
        (
            read("crates/ingest/src/parser.rs"),
            edit(
                "crates/ingest/src/parser.rs",
                "let fields: Vec<&str> = line.split(',').collect();",
                "let fields: Vec<&str> = line.trim().split(',').collect();",
            ),
        ),
        1,
        files={"crates/ingest/src/parser.rs": PARSER_RS},
    ),
    Scenario(
        "edit-java-currency",
        "edit",
        "CurrencyFormatter must round with BigDecimal and RoundingMode.HALF_EVEN; the auditors rejected HALF_UP "
        "in the 2025 review.",
        "the auditors rejected HALF_UP",
        "Format yen amounts without decimals.",
        (
            read("payments/src/main/java/com/harbor/payments/CurrencyFormatter.java"),
            edit(
                "payments/src/main/java/com/harbor/payments/CurrencyFormatter.java",
                "amount.setScale(2, RoundingMode.HALF_EVEN)",
                'amount.setScale(currency.equals("JPY") ? 0 : 2, RoundingMode.HALF_UP)',
            ),
        ),
        1,
        applies_to=("CurrencyFormatter.java",),
        files={"payments/src/main/java/com/harbor/payments/CurrencyFormatter.java": CURRENCY_JAVA},
    ),
    Scenario(
        "edit-sql-migration",
        "edit",
        "Migrations under db/migrations/ are append-only: never edit a migration that has been merged, add a new "
        "numbered file instead.",
        "never edit a migration that has been merged",
        "The index in the last migration should be on (customer_id, created_at), please adjust it.",
        (
            read("db/migrations/0042_add_invoice_index.sql"),
            edit(
                "db/migrations/0042_add_invoice_index.sql",
                "ON invoice (customer_id);",
                "ON invoice (customer_id, created_at);",
            ),
        ),
        1,
        applies_to=("db/migrations/",),
        files={"db/migrations/0042_add_invoice_index.sql": MIGRATION_SQL},
    ),
    Scenario(
        "edit-yaml-workflow",
        "edit",
        "The release workflow pins every action by commit SHA, never by tag: the supply-chain policy check fails "
        "on a tag.",
        "the supply-chain policy check fails",
        "Bump the setup-node action in the release workflow to v5.",
        (
            read(".github/workflows/release.yml"),
            edit(
                ".github/workflows/release.yml",
                "actions/setup-node@1a4442cacd436585916779262731d5b162bc6ec7",
                "actions/setup-node@v5",
            ),
        ),
        1,
        applies_to=(".github/workflows/",),
        files={".github/workflows/release.yml": RELEASE_YML},
    ),
    Scenario(
        "edit-dockerfile-base",
        "edit",
        "Our Dockerfile's base image must stay on the internal mirror registry.harbor.internal; Docker Hub is "
        "blocked from CI runners.",
        "Docker Hub is blocked from CI runners",
        "Install curl in the container image.",
        (
            read("deploy/Dockerfile"),
            edit(
                "deploy/Dockerfile",
                "FROM registry.harbor.internal/python:3.12-slim",
                "FROM python:3.12-slim\nRUN apt-get update && apt-get install -y curl",
            ),
        ),
        1,
        applies_to=("Dockerfile",),
        files={"deploy/Dockerfile": DOCKERFILE},
    ),
    Scenario(
        "edit-korean-guide",
        "edit",
        "문서/배포_가이드.md 는 운영팀이 검토한 문서라서 수정하면 #ops-review 채널에 꼭 알려야 한다.",
        "#ops-review 채널에 꼭 알려야 한다",
        "배포 가이드에 롤백 절차를 한 줄 추가해 줘.",
        (
            read("문서/배포_가이드.md"),
            edit(
                "문서/배포_가이드.md",
                "3. 운영에 배포한다.",
                "3. 운영에 배포한다.\n4. 문제가 생기면 이전 버전으로 롤백한다.",
            ),
        ),
        1,
        applies_to=("문서/배포_가이드.md",),
        files={"문서/배포_가이드.md": DEPLOY_GUIDE_KO},
    ),
    Scenario(
        "edit-korean-refund",
        "edit",
        "src/결제/환불.py 의 환불 금액은 원 단위 정수로만 계산한다. 소수점이 생기면 정산 배치가 실패한다.",
        "소수점이 생기면 정산 배치가 실패한다",
        "환불 수수료 계산 버그 좀 고쳐줘.",
        (
            read("src/결제/환불.py"),
            edit("src/결제/환불.py", "return 금액 * 비율", "return 금액 * 비율 / 100"),
        ),
        1,
        files={"src/결제/환불.py": REFUND_KO_PY},
    ),
    Scenario(
        "edit-settings-debug",
        "edit",
        "Never turn DEBUG on in settings.py, even for a minute: the staging stack reads the same file and would "
        "show tracebacks to the public.",
        "would show tracebacks to the public",
        "Add the new REDIS_URL setting next to the database one.",
        (
            read("config/settings.py"),
            edit(
                "config/settings.py",
                'DATABASE_URL = os.environ["DATABASE_URL"]',
                'DATABASE_URL = os.environ["DATABASE_URL"]\nREDIS_URL = os.environ.get("REDIS_URL")',
            ),
        ),
        1,
        applies_to=("settings.py",),
        files={"config/settings.py": SETTINGS_PY},
    ),
    Scenario(
        "edit-kotlin-activity",
        "edit",
        "MainActivity must not do disk or network I/O on the main thread; StrictMode crashes the debug builds.",
        "StrictMode crashes the debug builds",
        "Load the user's saved theme when the app starts.",
        (
            read("app/src/main/java/com/harbor/app/MainActivity.kt"),
            edit(
                "app/src/main/java/com/harbor/app/MainActivity.kt",
                "setContentView(R.layout.activity_main)",
                'setTheme(File(filesDir, "theme").readText().toInt())\n        setContentView(R.layout.activity_main)',
            ),
        ),
        1,
        files={"app/src/main/java/com/harbor/app/MainActivity.kt": MAIN_ACTIVITY_KT},
    ),
    Scenario(
        "edit-proto-fields",
        "edit",
        "Field numbers in our .proto files are never reused or renumbered; a removed field is marked reserved.",
        "a removed field is marked reserved",
        "Remove the unused legacy_status field from the Order message.",
        (
            read("proto/orders/v1/orders.proto"),
            edit(
                "proto/orders/v1/orders.proto",
                "  string legacy_status = 3;\n  string status = 4;",
                "  string status = 3;",
            ),
        ),
        1,
        applies_to=("*.proto",),
        files={"proto/orders/v1/orders.proto": ORDERS_PROTO},
    ),
    Scenario(
        "edit-terraform-bucket",
        "edit",
        "Every bucket made by infra/modules/bucket keeps its public access block on; the security scanner fails "
        "the plan otherwise.",
        "the security scanner fails the plan otherwise",
        "Allow the marketing site to serve images straight from the assets bucket.",
        (
            read("infra/modules/bucket/main.tf"),
            edit("infra/modules/bucket/main.tf", "block_public_policy     = true", "block_public_policy     = false"),
        ),
        1,
        applies_to=("infra/modules/bucket/",),
        files={"infra/modules/bucket/main.tf": BUCKET_TF},
    ),
    # ------------------------------------------------------------------ new files in a folder a memory names
    Scenario(
        "write-go-handler",
        "write",
        "New HTTP handlers under services/api/handlers/ must also be added to the route table in "
        "services/api/routes.go, or they are never served.",
        "or they are never served",
        "Add a /healthz handler to the API.",
        (
            read("services/api/handlers/users.go"),
            write(
                "services/api/handlers/health.go",
                'package handlers\n\nimport "net/http"\n\nfunc Health(w http.ResponseWriter, r *http.Request) {\n'
                '\tw.Write([]byte("ok"))\n}\n',
            ),
        ),
        1,
        applies_to=("services/api/handlers/",),
        files={"services/api/handlers/users.go": USERS_GO},
    ),
    Scenario(
        "write-integration-test",
        "write",
        "Integration tests in tests/integration/ must use the tmp_tenant fixture: a test that writes to the shared "
        "tenant breaks the nightly run.",
        "breaks the nightly run",
        "Write an integration test for the export endpoint.",
        (
            read("tests/integration/test_import.py"),
            write(
                "tests/integration/test_export.py",
                'def test_export_returns_csv(client):\n    assert client.get("/export").status_code == 200\n',
            ),
        ),
        1,
        files={"tests/integration/test_import.py": TEST_IMPORT_PY},
    ),
    Scenario(
        "write-korean-docs",
        "write",
        "docs/ko/ 아래 새 문서는 맨 위에 번역 원문 링크를 넣어야 한다. 빠지면 문서 빌드가 실패한다.",
        "빠지면 문서 빌드가 실패한다",
        "설치 안내 문서를 한국어로 새로 써 줘.",
        (
            read("docs/ko/시작하기.md"),
            write("docs/ko/설치.md", "# 설치\n\n`pip install harbor` 로 설치한다.\n"),
        ),
        1,
        applies_to=("docs/ko/",),
        files={"docs/ko/시작하기.md": START_KO_MD},
    ),
    Scenario(
        "write-react-component",
        "write",
        "Every new React component in web/src/components gets a Storybook story beside it (Name.stories.tsx); "
        "the visual regression job fails without one.",
        "the visual regression job fails without one",
        "Create a Badge component for the status labels.",
        (
            read("web/src/components/Button.tsx"),
            write(
                "web/src/components/Badge.tsx",
                'export function Badge({ text }: { text: string }) {\n  return <span className="badge">{text}</span>;\n}\n',
            ),
        ),
        1,
        files={"web/src/components/Button.tsx": BUTTON_TSX},
    ),
    # ------------------------------------------------------------------ commands a memory warns about
    Scenario(
        "command-pulumi-up",
        "command",
        "Never run pulumi up against the prod stack from a laptop; prod deploys only through the release pipeline.",
        "prod deploys only through the release pipeline",
        "Apply the new bucket to prod.",
        (
            bash("pulumi stack select prod", "Select the prod stack"),
            bash("pulumi up --yes", "Deploy the stack"),
        ),
        1,
        outputs={"pulumi": ((0, "Updating (prod)\n", ""),)},
    ),
    Scenario(
        "command-force-push",
        "command",
        "Never force-push main or a release/* branch: the deploy bot tags those commits and a rewrite loses the tags.",
        "a rewrite loses the tags",
        "I rebased main on the upstream changes, push it.",
        (
            bash("git status --short", "Show the working tree status"),
            bash("git push --force origin main", "Push main"),
        ),
        1,
    ),
    Scenario(
        "command-npm-publish",
        "command",
        "Publish the @harbor/ui package only with npm run release, which builds it and sets the dist-tag; a bare "
        "npm publish ships an unbuilt package.",
        "a bare npm publish ships an unbuilt package",
        "Publish the new version of the UI package.",
        (
            bash("npm version patch", "Bump the patch version"),
            bash("npm publish", "Publish the package"),
        ),
        1,
        outputs={"npm": ((0, "v1.4.3\n", ""),)},
    ),
    Scenario(
        "command-docker-prune",
        "command",
        "Do not run docker system prune -a on the shared build host: it deletes the cached base images and the next "
        "builds take an hour.",
        "the next builds take an hour",
        "The disk on the build host is almost full, free some space.",
        (
            bash("df -h /", "Show disk usage"),
            bash("docker system prune -a -f", "Remove unused Docker data"),
        ),
        1,
        outputs={"docker": ((0, "Total reclaimed space: 41.2GB\n", ""),)},
    ),
    Scenario(
        "command-kubectl-namespace",
        "command",
        "Never delete the harbor-data namespace with kubectl: its persistent volumes are not backed up anywhere else.",
        "its persistent volumes are not backed up anywhere else",
        "Clean up the old namespaces in the cluster.",
        (
            bash("kubectl get namespaces", "List namespaces"),
            bash("kubectl delete namespace harbor-data", "Delete the namespace"),
        ),
        1,
        outputs={"kubectl": ((0, "NAME STATUS AGE\nharbor-data Active 412d\npreview-17 Active 90d\n", ""),)},
    ),
    Scenario(
        "command-alembic-downgrade",
        "command",
        "alembic downgrade is not safe on the shared staging database: revision 0031 drops columns. Restore the "
        "staging snapshot instead.",
        "Restore the staging snapshot instead",
        "Roll back the last database migration on staging.",
        (
            bash("alembic current", "Show the current revision"),
            bash("alembic downgrade -1", "Roll back one revision"),
        ),
        1,
        outputs={"alembic": ((0, "0032_add_invoice_notes (head)\n", ""),)},
    ),
    Scenario(
        "command-redis-flushall",
        "command",
        "Never run FLUSHALL on the session Redis: it logs every user out. Delete stale keys by prefix with "
        "scripts/redis_cleanup.py.",
        "it logs every user out",
        "Clear the stale cache entries, the dashboard shows old numbers.",
        (
            bash("redis-cli -n 2 DBSIZE", "Count the keys"),
            bash("redis-cli -n 2 FLUSHALL", "Clear the database"),
        ),
        1,
        outputs={"redis-cli": ((0, "(integer) 18233\n", ""),)},
    ),
    Scenario(
        "command-pip-install",
        "command",
        "Do not pip install packages into the project environment by hand: add them to requirements.in and run "
        "make lock, CI installs from the lock file only.",
        "CI installs from the lock file only",
        "Add the requests library, the webhook client needs it.",
        (
            bash("cat requirements.in", "Show the requirements"),
            bash("pip install requests", "Install requests"),
        ),
        1,
        files={"requirements.in": "httpx\npydantic\n"},
        outputs={"pip": ((0, "Successfully installed requests-2.32.3\n", ""),)},
    ),
    Scenario(
        "command-korean-reindex",
        "command",
        "scripts/reindex.sh 는 운영 검색 인덱스를 통째로 지우고 다시 만든다. 업무 시간(09~18시)에는 절대 실행하지 말 것.",
        "업무 시간(09~18시)에는 절대 실행하지 말 것",
        "검색 결과가 이상해. 인덱스를 다시 만들어 줘.",
        (
            bash("ls scripts", "List the scripts"),
            bash("./scripts/reindex.sh --all", "Rebuild the search index"),
        ),
        1,
        files={"scripts/reindex.sh": "#!/bin/sh\necho reindexing\n"},
    ),
    Scenario(
        "command-make-release",
        "command",
        "make release tags and uploads to PyPI at once; run make release-dry first and check the changelog date.",
        "run make release-dry first",
        "Cut the 2.4.0 release.",
        (
            bash("git tag --list 'v2.*'", "List the version tags"),
            bash("make release VERSION=2.4.0", "Make the release"),
        ),
        1,
        outputs={"make": ((0, "tagged v2.4.0\n", ""),)},
    ),
    Scenario(
        "command-rsync-delete",
        "command",
        "The rsync to docs.harbor.dev must never use --delete: that host serves the archived versions from the same "
        "folder.",
        "serves the archived versions from the same folder",
        "Sync the built docs to the docs server.",
        (
            bash("ls site", "List the built site"),
            bash("rsync -av --delete site/ deploy@docs.harbor.dev:/srv/docs/", "Upload the docs"),
        ),
        1,
        files={"site/index.html": "<h1>Harbor</h1>\n"},
        outputs={"rsync": ((0, "sent 1,204 bytes\n", ""),)},
    ),
    # ------------------------------------------------------------------ failures a memory explains
    Scenario(
        "failure-pytest-postgres",
        "failure",
        "The API tests need the test Postgres on port 5433: start it with docker compose up -d testdb before "
        "running pytest.",
        "start it with docker compose up -d testdb",
        "Run the API tests and fix whatever fails.",
        (
            bash("pytest tests/api -x -q", "Run the API tests"),
            bash("docker compose up -d testdb", "Start the test database"),
        ),
        1,
        outputs={
            "pytest": (
                (
                    1,
                    'E   psycopg.OperationalError: connection to server at "localhost" (127.0.0.1), port 5433 '
                    "failed: Connection refused\n1 error in 0.41s\n",
                    "",
                ),
            ),
            "docker": ((0, "Container testdb Started\n", ""),),
        },
    ),
    Scenario(
        "failure-node-heap",
        "failure",
        "The web build needs NODE_OPTIONS=--max-old-space-size=4096; with the default heap it runs out of memory on "
        "the charts bundle.",
        "runs out of memory on the charts bundle",
        "Build the web app.",
        (
            bash("npm run build", "Build the web app"),
            bash("NODE_OPTIONS=--max-old-space-size=4096 npm run build", "Build with a larger heap"),
        ),
        1,
        outputs={
            "npm run build": (
                (
                    134,
                    "",
                    "<--- Last few GCs --->\nFATAL ERROR: Reached heap limit Allocation failed - JavaScript heap "
                    "out of memory\n",
                ),
                (0, "built in 48s\n", ""),
            ),
        },
    ),
    Scenario(
        "failure-cargo-openssl",
        "failure",
        "Building the ingest crate needs cargo build --features vendored-openssl; the build hosts' system libssl "
        "is too old for openssl-sys.",
        "system libssl is too old for openssl-sys",
        "Compile the ingest service.",
        (
            bash("cargo build -p ingest", "Build the ingest crate"),
            bash("cargo build -p ingest --features vendored-openssl", "Build with vendored OpenSSL"),
        ),
        1,
        outputs={
            "cargo build -p ingest --features": ((0, "Finished dev [unoptimized] target(s)\n", ""),),
            "cargo": (
                (
                    101,
                    "",
                    "error: failed to run custom build command for `openssl-sys v0.9.103`\n"
                    "  Could not find OpenSSL 3.0 or newer (found 1.1.1)\n",
                ),
            ),
        },
    ),
    Scenario(
        "failure-go-private",
        "failure",
        "Our internal Go modules are private: set GOPRIVATE=github.com/harbor/* or go commands fail with a 404 from "
        "proxy.golang.org.",
        "set GOPRIVATE=github.com/harbor/*",
        "Run the Go tests.",
        (
            bash("go test ./...", "Run the Go tests"),
            bash("GOPRIVATE='github.com/harbor/*' go test ./...", "Run the tests with private modules"),
        ),
        1,
        outputs={
            "go test": (
                (
                    1,
                    "",
                    "go: github.com/harbor/internal-sdk@v1.8.0: reading "
                    "https://proxy.golang.org/github.com/harbor/internal-sdk/@v/v1.8.0.mod: 404 Not Found\n",
                ),
                (0, "ok  \tgithub.com/harbor/api\t0.8s\n", ""),
            ),
        },
    ),
    Scenario(
        "failure-maven-nexus",
        "failure",
        "Maven reads the Nexus credentials from ~/.m2/settings.xml (server id harbor-nexus); a 401 from "
        "nexus.harbor.internal means they are missing or expired.",
        "server id harbor-nexus",
        "Package the payments service.",
        (
            bash("mvn -q package -pl payments", "Package the payments module"),
            bash("cat ~/.m2/settings.xml", "Show the Maven settings"),
        ),
        1,
        outputs={
            "mvn": (
                (
                    1,
                    "[ERROR] Failed to execute goal on project payments: Could not resolve dependencies: Could not "
                    "transfer artifact com.harbor:harbor-commons:jar:3.2.1 from/to harbor-nexus "
                    "(https://nexus.harbor.internal/repository/maven/): status code: 401, reason phrase: "
                    "Unauthorized\n",
                    "",
                ),
            ),
        },
    ),
    Scenario(
        "failure-rspec-migration",
        "failure",
        "rspec fails with ActiveRecord::PendingMigrationError after pulling main: run bin/rails db:migrate "
        "RAILS_ENV=test first.",
        "after pulling main",
        "Run the Ruby specs.",
        (
            bash("bundle exec rspec", "Run the specs"),
            bash("bin/rails db:migrate RAILS_ENV=test", "Migrate the test database"),
        ),
        1,
        files={"bin/rails": "#!/bin/sh\necho migrated\n"},
        outputs={
            "bundle": (
                (
                    1,
                    "ActiveRecord::PendingMigrationError:\n  Migrations are pending. To resolve this issue, run:\n"
                    "        bin/rails db:migrate RAILS_ENV=test\n",
                    "",
                ),
            ),
        },
    ),
    Scenario(
        "failure-precommit-mypy",
        "failure",
        "mypy in pre-commit cannot see harbor_sdk unless it is listed under additional_dependencies of the mypy hook "
        "in .pre-commit-config.yaml.",
        "listed under additional_dependencies of the mypy hook",
        "Run the linters before I commit.",
        (
            bash("pre-commit run --all-files", "Run the pre-commit hooks"),
            read(".pre-commit-config.yaml"),
        ),
        1,
        files={
            ".pre-commit-config.yaml": "repos:\n  - repo: https://github.com/pre-commit/mirrors-mypy\n    rev: v1.13.0\n    hooks:\n      - id: mypy\n"
        },
        outputs={
            "pre-commit": (
                (
                    1,
                    "mypy..................................................................Failed\n"
                    "- hook id: mypy\nsrc/harbor/client.py:3: error: Cannot find implementation or library stub "
                    'for module named "harbor_sdk"  [import-not-found]\n',
                    "",
                ),
            ),
        },
    ),
    Scenario(
        "failure-korean-database",
        "failure",
        "로컬에서 manage.py migrate 가 Unknown database 'harbor_local' 로 실패하면 make db-create 로 데이터베이스를 먼저 만든다.",
        "make db-create 로 데이터베이스를 먼저 만든다",
        "마이그레이션 돌려줘.",
        (
            bash("python manage.py migrate", "Apply the migrations"),
            bash("make db-create", "Create the local database"),
        ),
        1,
        files={"manage.py": "import sys\nsys.exit(1)\n"},
        outputs={
            "python manage.py": (
                (1, "", "django.db.utils.OperationalError: (1049, \"Unknown database 'harbor_local'\")\n"),
            ),
            "make": ((0, "created harbor_local\n", ""),),
        },
    ),
    Scenario(
        "failure-helm-pending",
        "failure",
        "When helm says another operation is in progress, an earlier deploy crashed: helm rollback harbor-api to the "
        "last deployed revision, never delete the release secret by hand.",
        "never delete the release secret by hand",
        "Deploy the new chart version of the API.",
        (
            bash("helm upgrade harbor-api charts/api -n harbor", "Upgrade the release"),
            bash("helm history harbor-api -n harbor", "Show the release history"),
        ),
        1,
        outputs={
            "helm upgrade": (
                (1, "", "Error: UPGRADE FAILED: another operation (install/upgrade/rollback) is in progress\n"),
            ),
            "helm": ((0, "REVISION STATUS\n41 deployed\n42 pending-upgrade\n", ""),),
        },
    ),
    Scenario(
        "failure-ssh-bastion",
        "failure",
        "The bastion accepts only keys signed by the team CA: run harbor-ca sign ~/.ssh/id_ed25519.pub each morning, "
        "the certificate lasts 16 hours.",
        "the certificate lasts 16 hours",
        "Check the disk usage on the bastion host.",
        (
            bash("ssh deploy@bastion.harbor.internal df -h", "Check the bastion's disk"),
            bash("harbor-ca sign ~/.ssh/id_ed25519.pub", "Sign the SSH key"),
        ),
        1,
        outputs={
            "ssh": ((255, "", "deploy@bastion.harbor.internal: Permission denied (publickey).\n"),),
            "harbor-ca": ((0, "certificate written\n", ""),),
        },
    ),
    Scenario(
        "failure-yarn-certificate",
        "failure",
        "yarn install against npm.harbor.internal needs the corporate CA: export "
        "NODE_EXTRA_CA_CERTS=/etc/ssl/harbor-ca.pem first.",
        "needs the corporate CA",
        "Install the frontend dependencies.",
        (
            bash("yarn install --frozen-lockfile", "Install the dependencies"),
            bash("NODE_EXTRA_CA_CERTS=/etc/ssl/harbor-ca.pem yarn install --frozen-lockfile", "Install with the CA"),
        ),
        1,
        outputs={
            "yarn install": (
                (
                    1,
                    "",
                    'error An unexpected error occurred: "https://npm.harbor.internal/@harbor%2fui: self signed '
                    'certificate in certificate chain".\n',
                ),
                (0, "Done in 12.3s.\n", ""),
            ),
        },
    ),
)

#: One call before each scenario's own calls, that no stored memory concerns: nothing may be injected for it.
UNRELATED: tuple[Call, ...] = (
    read("README.md"),
    bash("ls -la", "List files"),
    bash("pwd", "Show the working directory"),
    read("LICENSE"),
    bash("date -u", "Show the date"),
    bash("git log --oneline -5", "Show recent commits"),
    read(".gitignore"),
    bash("whoami", "Show the user"),
    bash("uname -s", "Show the system"),
    read("CONTRIBUTING.md"),
    bash("echo hello", "Print a greeting"),
    bash("python3 --version", "Show the Python version"),
    read("docs/overview.md"),
    bash("wc -l README.md", "Count README lines"),
    bash("find . -name '*.md' -maxdepth 2", "Find markdown files"),
    write("notes/scratch.txt", "things to look at later\n"),
    bash("du -sh .", "Show the project size"),
    read("CHANGELOG.md"),
    bash("head -3 README.md", "Show the top of the README"),
    bash("ls docs", "List the docs"),
    read("src/utils/strings.py"),
    bash("git --version", "Show the git version"),
    write("notes/ideas.md", "- dark mode\n- keyboard shortcuts\n"),
    bash("sort --version | head -1", "Show the sort version"),
    read("web/src/index.css"),
    bash("true", "Do nothing"),
    bash("echo $SHELL", "Show the shell"),
    read("docs/glossary.md"),
    bash("git branch --show-current", "Show the current branch"),
    bash("cat CHANGELOG.md | head -5", "Show the changelog's top"),
    write("tmp/output.json", '{"ok": true}\n'),
    bash("ls -1 src", "List the source folder"),
    read("src/utils/dates.py"),
    bash("expr 6 \\* 7", "Multiply two numbers"),
    bash("hostname", "Show the host name"),
    read("docs/faq.md"),
    bash("tail -2 LICENSE", "Show the end of the license"),
    bash("ls -la docs", "List the docs in detail"),
    write("notes/meeting.txt", "retro on Friday\n"),
    bash("basename $(pwd)", "Show the folder name"),
)

#: The files every scenario's project holds (the unrelated calls read them).
PROJECT_FILES: dict[str, str] = {
    "README.md": "# Harbor\n\nA shipping platform.\n\n## Building\n\nSee CONTRIBUTING.md.\n",
    "LICENSE": "Apache License\nVersion 2.0, January 2004\nhttp://www.apache.org/licenses/\n",
    ".gitignore": "__pycache__/\nnode_modules/\n*.log\n",
    "CONTRIBUTING.md": "# Contributing\n\nOpen an issue first, then a pull request.\n",
    "CHANGELOG.md": "# Changelog\n\n## 2.3.0\n\n- Faster search.\n",
    "docs/overview.md": "# Overview\n\nHarbor moves containers between ports.\n",
    "docs/glossary.md": "# Glossary\n\n- berth: where a ship docks\n",
    "docs/faq.md": "# FAQ\n\nQ: Is it fast?\nA: Yes.\n",
    "src/utils/strings.py": "def shout(text: str) -> str:\n    return text.upper()\n",
    "src/utils/dates.py": "from datetime import date\n\n\ndef today() -> date:\n    return date.today()\n",
    "web/src/index.css": "body { margin: 0; font-family: sans-serif; }\n",
}

assert len(SCENARIOS) == 40 and len(UNRELATED) == 40
assert len({s.id for s in SCENARIOS}) == 40
assert all(s.marker in s.memory for s in SCENARIOS)
