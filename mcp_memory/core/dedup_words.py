"""The word tables of the dedup rule (mcp_memory/core/dedup.py): negations, number,
date and unit words, and opposites, in English and Korean. Data only.

Extending a table can only keep more pairs apart, never merge more: every entry is a
reason for two texts to differ.
"""

from __future__ import annotations

ARTICLES = frozenset({"a", "an", "the"})

NEGATION_WORDS = frozenset(
    {
        "not", "no", "never", "none", "nobody", "nothing", "nowhere", "neither", "nor",
        "without", "cannot", "noone", "nope", "nowise", "nevermore",
    }
)  # fmt: skip
#: Contractions typed without the apostrophe still negate ("dont", "isnt").
NT_CONTRACTIONS = frozenset(
    {
        "dont", "doesnt", "didnt", "isnt", "arent", "wasnt", "werent", "cant", "couldnt",
        "wouldnt", "shouldnt", "wont", "hasnt", "havent", "hadnt", "mustnt", "neednt",
        "aint", "mightnt", "shant", "darent", "oughtnt",
    }
)  # fmt: skip

NUMBER_WORDS = frozenset(
    {
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
        "eighteen", "nineteen", "twenty", "thirty", "forty", "fifty", "sixty", "seventy",
        "eighty", "ninety", "hundred", "thousand", "million", "billion", "trillion", "dozen",
        "once", "twice", "thrice", "single", "double", "triple", "half", "quarter",
        "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
        "tenth", "last", "both", "all", "every", "each", "few", "several", "many", "most",
        "some", "any",
        "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
        "mondays", "tuesdays", "wednesdays", "thursdays", "fridays", "saturdays", "sundays",
        "mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat",
        "january", "february", "march", "april", "may", "june", "july", "august",
        "september", "october", "november", "december",
        "jan", "feb", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
        "am", "pm", "noon", "midnight", "morning", "afternoon", "evening", "night", "tonight",
        "today", "tomorrow", "yesterday", "weekday", "weekdays", "weekend", "weekends",
        "hourly", "daily", "nightly", "weekly", "biweekly", "monthly", "quarterly", "yearly",
        "annually",
        "ms", "millisecond", "milliseconds", "us", "ns", "sec", "secs", "seconds", "min", "mins",
        "minute", "minutes", "hour", "hours", "hr", "hrs", "day", "days", "week", "weeks",
        "month", "months", "year", "years",
        "byte", "bytes", "kb", "mb", "gb", "tb", "pb", "kib", "mib", "gib", "tib",
        "kilobytes", "megabytes", "gigabytes", "terabytes", "bit", "bits", "kbps", "mbps", "gbps",
        "percent", "px", "em", "rem", "pt", "dpi", "mm", "cm", "km", "kg", "mg", "lb", "lbs",
        "hz", "khz", "mhz", "ghz", "cpu", "cpus", "core", "cores", "vcpu", "vcpus",
        "usd", "eur", "gbp", "krw", "jpy", "dollar", "dollars", "euro", "euros", "cent", "cents",
        "utc", "gmt", "kst", "pst", "pdt", "est", "edt", "cet", "cest", "jst", "ist",
    }
)  # fmt: skip

#: Korean number and date words: the longer ones may carry a particle (월요일에), so
#: they match the start of a word; the one-syllable ones only a whole word.
KO_NUMBER_PREFIXES = (
    "하나", "다섯", "여섯", "일곱", "여덟", "아홉", "스물", "서른", "마흔", "예순", "일흔",
    "여든", "아흔", "열한", "열두", "열세", "열네", "하루", "이틀", "사흘", "나흘", "닷새",
    "엿새", "이레", "열흘", "보름", "월요일", "화요일", "수요일", "목요일", "금요일", "토요일",
    "일요일", "오전", "오후", "자정", "정오", "새벽", "아침", "저녁", "매일", "매주", "매월",
    "매달", "매년", "매시간", "격주", "어제", "오늘", "내일", "모레", "주말", "평일", "첫째",
    "둘째", "셋째", "넷째", "마지막", "처음", "모든", "모두",
)  # fmt: skip
KO_NUMBER_WORDS = frozenset({"한", "두", "세", "네", "열", "백", "천", "만", "억", "조", "첫", "둘", "셋", "넷", "반"})

#: Groups of words that contradict each other. Any two members from different
#: sides of a group are opposites. English entries are base forms; -s, -ed, -ing
#: forms are added (see `_inflect`). Korean entries are stems matched inside a word.
OPPOSITES_EN: tuple[tuple[str, ...], ...] = (
    ("enable", "disable"), ("enabled", "disabled"), ("allow", "deny", "forbid", "prohibit", "block",
    "disallow", "reject", "refuse", "ban"), ("allowed", "forbidden", "prohibited", "denied", "banned"),
    ("on", "off"), ("true", "false"), ("yes", "no"), ("before", "after"), ("earlier", "later"),
    ("add", "remove", "delete", "drop"), ("increase", "decrease", "reduce", "lower"), ("always", "never",
    "sometimes", "rarely", "seldom", "usually", "often"), ("must", "may", "should", "can", "might",
    "could", "optional", "required"), ("required", "optional"), ("mandatory", "optional"),
    ("min", "max"), ("minimum", "maximum"), ("upper", "lower"), ("higher", "lower"), ("more", "less",
    "fewer"), ("most", "least", "fewest"), ("larger", "smaller"), ("bigger", "smaller"),
    ("greater", "less", "smaller"), ("above", "below"), ("over", "under"), ("inside", "outside"),
    ("internal", "external"), ("first", "last"), ("earliest", "latest"), ("oldest", "newest"),
    ("old", "new"), ("start", "stop", "end", "finish"), ("begin", "end"), ("open", "close", "shut"),
    ("opened", "closed"), ("up", "down"), ("in", "out"), ("inbound", "outbound"), ("input", "output"),
    ("import", "export"), ("push", "pull"), ("send", "receive"), ("upload", "download"),
    ("read", "write"), ("get", "set", "put", "post"), ("client", "server"), ("public", "private"),
    ("include", "exclude", "omit"), ("accept", "reject", "decline"), ("success", "failure", "error"),
    ("succeed", "fail"), ("pass", "fail"), ("passed", "failed"), ("valid", "invalid"),
    ("left", "right"), ("top", "bottom"), ("front", "back"), ("frontend", "backend"), ("head", "tail"),
    ("sync", "async"), ("synchronous", "asynchronous"), ("encrypt", "decrypt"), ("encrypted",
    "unencrypted", "plaintext"), ("compress", "decompress"), ("lock", "unlock"), ("mount", "unmount"),
    ("install", "uninstall"), ("online", "offline"), ("connect", "disconnect"), ("available",
    "unavailable"), ("stable", "unstable", "beta", "alpha", "experimental", "deprecated"),
    ("safe", "unsafe"), ("supported", "unsupported", "deprecated"), ("blocking", "nonblocking"),
    ("strict", "lenient", "loose", "relaxed"), ("hot", "cold", "warm"), ("fast", "slow"),
    ("cheap", "expensive"), ("light", "dark"), ("primary", "secondary", "replica", "standby"),
    ("leader", "follower"), ("major", "minor", "patch"), ("debug", "release"), ("dev", "prod",
    "staging", "test", "qa"), ("development", "production", "staging", "testing"), ("local",
    "remote", "global"), ("manual", "automatic"), ("manually", "automatically"), ("explicit",
    "implicit"), ("explicitly", "implicitly"), ("static", "dynamic"), ("mutable", "immutable"),
    ("allowlist", "denylist", "blocklist"), ("whitelist", "blacklist"), ("keep", "discard",
    "delete", "drop"), ("retain", "purge", "delete"), ("commit", "rollback"), ("approve", "reject"),
    ("grant", "revoke"), ("login", "logout"), ("signin", "signout"), ("attach", "detach"),
    ("show", "hide"), ("visible", "hidden", "invisible"), ("expand", "collapse"), ("forward",
    "backward"), ("horizontal", "vertical"), ("inclusive", "exclusive"), ("even", "odd"),
    ("ascending", "descending"), ("asc", "desc"), ("agree", "disagree"), ("like", "dislike"),
    ("prefer", "avoid"), ("preferred", "discouraged"), ("recommended", "discouraged", "deprecated"),
    ("good", "bad"), ("better", "worse"), ("best", "worst"), ("correct", "incorrect", "wrong"),
    ("right", "wrong"), ("full", "empty", "partial"), ("all", "none", "some", "any"),
    ("everyone", "nobody", "someone"), ("everything", "nothing", "something"), ("with", "without"),
    ("and", "or"), ("is", "was"), ("are", "were"), ("will", "would"), ("ipv4", "ipv6"),
    ("http", "https"), ("tcp", "udp"), ("get", "post", "put", "patch", "delete"),
    ("north", "south", "east", "west"), ("mac", "windows", "linux"), ("macos", "windows", "linux"),
    ("read-only", "read-write"), ("readonly", "readwrite"), ("include", "exclude"),
)  # fmt: skip
OPPOSITES_KO: tuple[tuple[str, ...], ...] = (
    ("활성", "비활성"), ("허용", "금지", "차단", "거부", "불허"), ("켜", "꺼", "끄", "끈다"), ("켜짐", "꺼짐"),
    ("이전", "이후"), ("전에", "후에"), ("사전", "사후"), ("추가", "삭제", "제거"), ("증가", "감소"),
    ("늘리", "줄이"), ("올리", "내리"), ("항상", "절대", "결코", "가끔"), ("시작", "중지", "중단", "종료"),
    ("포함", "제외"), ("필수", "선택"), ("최소", "최대"), ("이상", "이하", "미만", "초과"), ("상승", "하락"),
    ("공개", "비공개"), ("동기", "비동기"), ("성공", "실패"), ("거짓", "참이"), ("열기", "닫기"),
    ("열려", "닫혀"), ("읽기", "쓰기"), ("입력", "출력"), ("업로드", "다운로드"), ("오전", "오후"),
    ("상위", "하위"), ("내부", "외부"), ("수동", "자동"), ("동적", "정적"), ("온라인", "오프라인"),
    ("가능", "불가능", "불가"), ("사용", "미사용"), ("있", "없"), ("로컬", "원격"), ("먼저", "나중"),
    ("앞에", "뒤에"), ("높", "낮"), ("많", "적"), ("크", "작"), ("빠르", "느리"), ("신규", "기존"),
    ("운영", "개발", "스테이징", "테스트"), ("동의", "반대"), ("승인", "거절", "반려"), ("암호화", "복호화"),
    ("압축", "해제"), ("잠금", "잠금해제"), ("설치", "제거"), ("연결", "해제"), ("표시", "숨김"),
    ("오름차순", "내림차순"), ("정상", "비정상"), ("유효", "무효"), ("필요", "불필요"),
)  # fmt: skip

#: Prefixes that turn a word into its opposite: secure/insecure, 활성/비활성.
NEGATING_PREFIXES = ("un", "in", "im", "il", "ir", "dis", "non", "de", "a", "anti", "mis", "counter")
KO_NEGATING_PREFIXES = ("비", "불", "미", "무", "반", "몰")
