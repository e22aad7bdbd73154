"""The dedup pair table: pairs that must stay apart (a correction, another fact) and pairs
that must merge (the same fact typed again), in English and Korean.

Each apart pair is (stored first, then remembered, the difference that keeps them apart).
The rule is in mcp_memory/core/dedup.py; the table is run through the service on every
backend by tests/core/test_dedup_service.py and against the pure rule by test_dedup.py.
"""

from __future__ import annotations

from mcp_memory.core.ranking import DEDUP_SIMILARITY, DEDUP_WORD_OVERLAP, word_overlap


def is_duplicate(similarity: float, new_content: str, existing_content: str) -> bool:
    """The rule before the difference tests, for comparison: near-identical by embedding AND by
    wording (cosine >= DEDUP_SIMILARITY and word Jaccard >= DEDUP_WORD_OVERLAP)."""
    return similarity >= DEDUP_SIMILARITY and word_overlap(new_content, existing_content) >= DEDUP_WORD_OVERLAP


APART: list[tuple[str, str, str]] = [
    # negation
    ("Deploys are allowed on Fridays", "Deploys are not allowed on Fridays", "negation"),
    ("The API server does not listen on port 8080", "The API server listens on port 8080", "negation"),
    ("We use the staging cluster for load tests", "We never use the staging cluster for load tests", "negation"),
    ("The cache layer can serve stale reads", "The cache layer cannot serve stale reads", "negation"),
    ("The billing job retries failed charges", "The billing job doesn't retry failed charges", "negation"),
    (
        "Reports are generated with the audit trail attached",
        "Reports are generated without the audit trail attached",
        "negation",
    ),
    ("The migration script is safe to run twice", "The migration script is not safe to run twice", "negation"),
    (
        "There is a rate limit on the public search endpoint",
        "There is no rate limit on the public search endpoint",
        "negation",
    ),
    (
        "Interns should have write access to the main repository",
        "Interns should not have write access to the main repository",
        "negation",
    ),
    (
        "The nightly export includes customer email addresses",
        "The nightly export includes no customer email addresses",
        "negation",
    ),
    (
        "Feature branches are rebased before they are merged",
        "Feature branches aren't rebased before they are merged",
        "negation",
    ),
    ("배포는 매주 화요일 오전에 진행한다", "배포는 매주 화요일 오전에 진행하지 않는다", "negation"),
    ("이 서비스는 외부 API를 호출한다", "이 서비스는 외부 API를 호출하지 않는다", "negation"),
    ("운영 데이터베이스에 직접 접속할 수 있다", "운영 데이터베이스에 직접 접속할 수 없다", "negation"),
    ("금요일에는 배포를 해도 된다", "금요일에는 배포를 안 해도 된다", "negation"),
    ("신규 입사자는 관리자 권한을 받을 수 있다", "신규 입사자는 관리자 권한을 받을 수 없다", "negation"),
    ("로그 파일은 압축해서 보관한다", "로그 파일은 압축하지 못한다", "negation"),
    ("이 작업은 롤백이 필요한 변경이다", "이 작업은 롤백이 필요한 변경이 아니다", "negation"),
    ("프로덕션 서버에서 디버그 모드를 켜라", "프로덕션 서버에서 디버그 모드를 켜지 마라", "negation"),
    # numbers, versions, dates, times, sizes, units
    ("Use Python 3.11 for the build", "Use Python 3.12 for the build", "number"),
    (
        "The reporting service restarts at 3:00 every night",
        "The reporting service restarts at 4:00 every night",
        "number",
    ),
    ("The upload limit for attachments is 10 MB", "The upload limit for attachments is 25 MB", "number"),
    ("The upload limit for attachments is 10 MB", "The upload limit for attachments is 10 GB", "number"),
    ("Session tokens expire after 30 minutes", "Session tokens expire after 30 hours", "number"),
    ("The release freeze starts on 2026-12-18", "The release freeze starts on 2026-12-19", "number"),
    ("The payments service retries webhooks three times", "The payments service retries webhooks five times", "number"),
    ("Standup is at 9am on weekdays", "Standup is at 9pm on weekdays", "number"),
    ("Sprint planning happens on Monday mornings", "Sprint planning happens on Tuesday mornings", "number"),
    ("The database pool holds 20 connections per pod", "The database pool holds 200 connections per pod", "number"),
    (
        "Node 18 is the minimum supported runtime for the web app",
        "Node 20 is the minimum supported runtime for the web app",
        "number",
    ),
    ("Requests time out after 1.5 seconds", "Requests time out after 15 seconds", "number"),
    ("The SLA is 99.9% availability per month", "The SLA is 99.95% availability per month", "number"),
    ("Backups are kept for 7 days", "Backups are kept for 7 weeks", "number"),
    ("빌드 서버는 매일 새벽 3시에 재시작한다", "빌드 서버는 매일 새벽 4시에 재시작한다", "number"),
    ("첨부 파일 업로드 한도는 10MB이다", "첨부 파일 업로드 한도는 10GB이다", "number"),
    ("세션은 30분 후에 만료된다", "세션은 30일 후에 만료된다", "number"),
    ("결제 서비스는 웹훅을 세 번 재시도한다", "결제 서비스는 웹훅을 다섯 번 재시도한다", "number"),
    ("정기 점검은 매주 월요일에 한다", "정기 점검은 매주 수요일에 한다", "number"),
    ("회의는 오전 10시에 시작한다", "회의는 오후 10시에 시작한다", "opposite"),
    # identifiers
    (
        "Feature flag checkout_v2 is enabled in production",
        "Feature flag checkout_v3 is enabled in production",
        "number",
    ),
    (
        "Feature flag new_checkout is on for internal users",
        "Feature flag old_checkout is on for internal users",
        "identifier",
    ),
    (
        "The service reads its settings from config.yaml",
        "The service reads its settings from secrets.yaml",
        "identifier",
    ),
    ("Run the migration with --dry-run first", "Run the migration with --force first", "identifier"),
    ("Logs are written to /var/log/app", "Logs are written to /var/log/api", "identifier"),
    (
        "The docs live at https://docs.example.com/guide",
        "The docs live at https://docs.example.org/guide",
        "identifier",
    ),
    (
        "Set the PAYMENTS_API_KEY variable before starting",
        "Set the PAYMENT_API_KEY variable before starting",
        "identifier",
    ),
    ("Call getUserById to load a profile", "Call getUsersById to load a profile", "identifier"),
    ('The header to send is "X-Tenant-Id"', 'The header to send is "X-Team-Id"', "identifier"),
    ("The primary region is eu-west-1", "The primary region is us-west-1", "number"),
    ("Import the client from app.services.billing", "Import the client from app.services.invoicing", "identifier"),
    ("설정 파일은 config/prod.yaml 에 있다", "설정 파일은 config/dev.yaml 에 있다", "identifier"),
    ("기능 플래그 new_search 를 사용한다", "기능 플래그 old_search 를 사용한다", "identifier"),
    # opposites
    (
        "Feature flag checkout_v2 is enabled in production",
        "Feature flag checkout_v2 is disabled in production",
        "opposite",
    ),
    (
        "The firewall rule allows traffic from the office network",
        "The firewall rule denies traffic from the office network",
        "opposite",
    ),
    ("Maintenance mode is on for the admin panel", "Maintenance mode is off for the admin panel", "opposite"),
    ("The strict_mode setting is true for new tenants", "The strict_mode setting is false for new tenants", "opposite"),
    ("Run the database migration before the deploy", "Run the database migration after the deploy", "opposite"),
    ("Add the reviewer group to every pull request", "Remove the reviewer group from every pull request", "opposite"),
    ("Increase the worker count when the queue grows", "Decrease the worker count when the queue grows", "opposite"),
    ("Always squash commits when merging to main", "Never squash commits when merging to main", "negation"),
    ("You must sign the commits you push", "You must not sign the commits you push", "negation"),
    ("The cache is encrypted at rest", "The cache is unencrypted at rest", "opposite"),
    ("Webhook delivery is synchronous", "Webhook delivery is asynchronous", "opposite"),
    ("Sort the audit log in ascending order", "Sort the audit log in descending order", "opposite"),
    ("The minimum batch size is set by the scheduler", "The maximum batch size is set by the scheduler", "opposite"),
    ("검색 기능은 활성화되어 있다", "검색 기능은 비활성화되어 있다", "opposite"),
    ("사내망에서 오는 트래픽은 허용한다", "사내망에서 오는 트래픽은 차단한다", "opposite"),
    ("배포 전에 마이그레이션을 실행한다", "배포 후에 마이그레이션을 실행한다", "opposite"),
    ("큐가 길어지면 워커 수를 증가시킨다", "큐가 길어지면 워커 수를 감소시킨다", "opposite"),
    ("리뷰어 그룹을 모든 PR에 추가한다", "리뷰어 그룹을 모든 PR에서 제거한다", "opposite"),
    ("로그는 오름차순으로 정렬한다", "로그는 내림차순으로 정렬한다", "opposite"),
    # other words that change the fact
    ("Use PostgreSQL for the orders service", "Use MySQL for the orders service", "identifier"),
    ("The staging cluster runs the integration tests", "The production cluster runs the integration tests", "opposite"),
    ("Service A calls service B on every checkout", "Service B calls service A on every checkout", "wording"),
    ("Deploys are allowed on Fridays", "Deploys are allowed on Fridays and Saturdays", "number"),
    (
        "The mobile team owns the push notification service",
        "The web team owns the push notification service",
        "wording",
    ),
    # a comparison, an arrow or a status mark is the whole fact
    ("Page on-call when checkout latency > 200ms", "Page on-call when checkout latency < 200ms", "symbol"),
    ("Alert when the error budget is >= 5% burned", "Alert when the error budget is <= 5% burned", "symbol"),
    ("Orders sync one way: shop → warehouse", "Orders sync one way: shop ← warehouse", "symbol"),
    ("The nightly release build status is ✅", "The nightly release build status is ❌", "symbol"),
    ("The retry guard is attempts != limit", "The retry guard is attempts == limit", "symbol"),
    ("The invoice line total is price * quantity", "The invoice line total is price / quantity", "symbol"),
    # a name one letter from another is another person, not a typo
    ("Ask Kristen to review billing changes", "Ask Kirsten to review billing changes", "wording"),
    ("Sara owns the billing runbook", "Sarah owns the billing runbook", "wording"),
    ("Brian approves the release notes", "Bryan approves the release notes", "wording"),
    ("The deploy bot is called Hermes", "The deploy bot is called Hermos", "wording"),
    # in Chinese and Japanese one character is a word: never a typo
    ("周五可以部署生产环境", "周五不可以部署生产环境", "wording"),
    ("主数据库服务器在北京", "主数据库服务器在南京", "wording"),
    ("缓存功能已启用", "缓存功能未启用", "wording"),
    ("本番環境のキャッシュを有効にする", "本番環境のキャッシュを無効にする", "wording"),
    ("定期デプロイは毎週火曜日に行う", "定期デプロイは毎週水曜日に行う", "wording"),
    # in Korean one jamo makes another word or another person
    ("지훈이 결제 서비스의 장애 대응을 담당한다", "지환이 결제 서비스의 장애 대응을 담당한다", "wording"),
    ("환불 요청은 결제 시스템에서 먼저 처리한다", "환불 요청은 결재 시스템에서 먼저 처리한다", "wording"),
    # an exponent is not a digit
    ("The free tier allows 10³ requests a day", "The free tier allows 103 requests a day", "number"),
    # a hash or a colour is not a word with a typo
    ("The brand colour on the login page is #ffaaaa", "The brand colour on the login page is #ffaaab", "identifier"),
    ("The last good release commit is deadbeef", "The last good release commit is deadbeaf", "wording"),
]

MERGE: list[tuple[str, str]] = [
    (
        "Secrets never go into the repository; services read them from Vault",
        "Secrets never go into the repository: services read them from Vault.",
    ),
    ("Never squash commits when merging to main", "never squash commits when merging to main."),
    ("The cache is encrypted at rest", "The cache is encrypted at rest!"),
    ("Run the database migration before the deploy", "Run the database migration before the deploy ..."),
    ("Session tokens expire after 30 minutes", "session tokens expire after 30 minutes."),
    ("검색 기능은 활성화되어 있다", "검색 기능은 활성화되어 있다!"),
    ("세션은 30분 후에 만료된다", "세션은 30분 후에 만료된다."),
    ("Deploys are allowed on Fridays", "Deploys are allowed on Fridays"),
    ("Deploys are allowed on Fridays", "deploys are allowed on fridays"),
    ("Deploys are allowed on Fridays", "DEPLOYS ARE ALLOWED ON FRIDAYS"),
    ("Deploys are allowed on Fridays", "Deploys are allowed on Fridays."),
    ("Deploys are allowed on Fridays", "  Deploys   are allowed\ton Fridays  "),
    ("Deploys are allowed on Fridays", "Deploys are alowed on Fridays"),
    ("Use Python 3.11 for the build", "use python 3.11 for the build!"),
    ("Use Python 3.11 for the build", "Use Python 3.11 for teh build"),
    ("Use Python 3.11 for the build", "Ｕｓｅ Ｐｙｔｈｏｎ ３.１１ ｆｏｒ ｔｈｅ ｂｕｉｌｄ"),
    ("Feature flag checkout_v2 is enabled in production", "Feature flag checkout_v2 is enabled in production."),
    ("Feature flag checkout_v2 is enabled in production", "feature flag CHECKOUT_V2 is enabled in production"),
    ("The API server does not listen on port 8080", "The API server doesn't listen on port 8080"),
    ("The API server does not listen on port 8080", "The API server does not listen on port 8080!"),
    (
        "Rolling deploys drain in-flight requests before the pod exits",
        "Rolling deploys drain inflight requests before the pod exits",
    ),
    (
        "Rolling deploys drain in-flight requests before the pod exits",
        "Rolling deploys drain in-flight requests before the pod exits.",
    ),
    (
        "The staging database is restored from the nightly production snapshot every Monday at 06:00 UTC",
        "The staging database is restored from the nightly prodcution snapshot every Monday at 06:00 UTC",
    ),
    (
        "Money amounts are stored as integer cents, never as floating-point numbers",
        "Money amounts are stored as integer cents, never as floating-piont numbers",
    ),
    (
        "The payment provider's sandbox credentials are in 1Password, in the Engineering vault",
        "The payment provider's sandbox credentials are in 1Pasword, in the Engineering vault",
    ),
    (
        "Run the linter with ruff check --fix before committing",
        "run the linter with ruff check --fix before committing.",
    ),
    ("Logs are written to /var/log/app", "logs are written to /var/log/app."),
    ("The docs live at https://docs.example.com/guide", "The docs live at https://docs.example.com/guide ."),
    ("Redis is only a cache for us", "Redis is only a cache for us."),
    ("Use the “main” branch for hotfixes", 'Use the "main" branch for hotfixes'),
    (
        "We chose PostgreSQL over MongoDB for the orders service",
        "We chose Postgresql over MongoDB for the orders service",
    ),
    ("主数据库服务器在北京", "主数据库服务器在北京。"),
    ("定期デプロイは毎週火曜日に行う", "定期デプロイは毎週火曜日に行う。"),
    ("배포는 매주 화요일 오전에 진행한다", "배포는 매주 화요일 오전에 진행한다"),
    ("배포는 매주 화요일 오전에 진행한다", "배포는 매주 화요일 오전에 진행한다."),
    ("배포는 매주 화요일 오전에 진행한다", "배포는  매주 화요일 오전에   진행한다"),
    ("배포는 매주 화요일 오전에 진행한다", "배포는 매주 화요일오전에 진행한다"),
    ("결제 서비스는 웹훅을 세 번 재시도한다", "결제 서비스는 웹훅을 세 번 재시도한다!"),
    ("운영 데이터베이스에 직접 접속할 수 없다", "운영 데이터베이스에 직접 접속할 수 없다."),
    ("빌드 서버는 매일 새벽 3시에 재시작한다", "빌드 서버는 매일 새벽 3시에 재시작 한다"),
    ("로그 파일은 압축해서 보관한다", "로그 파일은 압축해서 보관 한다"),
    ("The public API's SLA is 99.9% availability per month", "The public API's SLA is 99.9% availabilty per month"),
    (
        "Architecture decision records are kept in docs/adr and numbered in order",
        "Architecture decision records are kept in docs/adr and numbered in oder",
    ),
]
