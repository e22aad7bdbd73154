# bash completion for mcp-memory
# Generated from the Typer app by `python -m mcp_memory.cli.completions`; do not edit by hand.
# It completes mcp-memory and mcp-tenant-memory. Install: source this file from ~/.bashrc, or copy it to
# ~/.local/share/bash-completion/completions/mcp-memory and link mcp-tenant-memory to it there
# (bash-completion loads a file by the name of the command being completed).

_mcp_memory() {
    local cur prev cmd i
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    if [[ "$prev" == "=" ]]; then prev="${COMP_WORDS[COMP_CWORD-2]}"; cur="${cur#=}"; fi
    cmd=""
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${COMP_WORDS[i]}" in
            -*) ;;
            *) cmd="${COMP_WORDS[i]}"; break ;;
        esac
    done
    case "$cmd" in
        "")
            COMPREPLY=($(compgen -W "--version -h --help backup calibrate compact completion doctor export forget hook import list oauth recall remember serve-http serve-stdio stats ui" -- "$cur"))
            ;;
        backup)
            case "$prev" in
            esac
            COMPREPLY=($(compgen -W "--json -h --help" -- "$cur"))
            ;;
        calibrate)
            case "$prev" in
                --cases) return ;;
                -t|--tenant) compopt +o default 2>/dev/null; return ;;
            esac
            COMPREPLY=($(compgen -W "--cases --builtin -t --tenant --json -h --help" -- "$cur"))
            ;;
        compact)
            case "$prev" in
                -t|--tenant) compopt +o default 2>/dev/null; return ;;
            esac
            COMPREPLY=($(compgen -W "--dry-run -t --tenant --all-tenants --json -h --help" -- "$cur"))
            ;;
        completion)
            case "$prev" in
            esac
            COMPREPLY=($(compgen -W "-h --help" -- "$cur"))
            ;;
        doctor)
            case "$prev" in
                --claude) compopt +o default 2>/dev/null; return ;;
            esac
            COMPREPLY=($(compgen -W "--claude -h --help" -- "$cur"))
            ;;
        export)
            case "$prev" in
                -t|--tenant) compopt +o default 2>/dev/null; return ;;
                -o|--output) return ;;
                --format) COMPREPLY=($(compgen -W "jsonl markdown mcp-knowledge-graph" -- "$cur")); return ;;
            esac
            COMPREPLY=($(compgen -W "-t --tenant --all-tenants -o --output --with-embeddings --json --format -h --help" -- "$cur"))
            ;;
        forget)
            case "$prev" in
                -t|--tenant) compopt +o default 2>/dev/null; return ;;
                -c|--conversation) compopt +o default 2>/dev/null; return ;;
            esac
            COMPREPLY=($(compgen -W "-t --tenant -c --conversation --json -h --help" -- "$cur"))
            ;;
        hook)
            case "$prev" in
                -t|--tenant) compopt +o default 2>/dev/null; return ;;
                -c|--conversation) compopt +o default 2>/dev/null; return ;;
                --client) COMPREPLY=($(compgen -W "claude-code codex" -- "$cur")); return ;;
            esac
            COMPREPLY=($(compgen -W "-t --tenant -c --conversation --conversation-from-session --client -h --help" -- "$cur"))
            ;;
        import)
            case "$prev" in
                --from) COMPREPLY=($(compgen -W "jsonl claude-code mcp-knowledge-graph mem0 mcp-memory-service basic-memory text" -- "$cur")); return ;;
                -t|--tenant) compopt +o default 2>/dev/null; return ;;
                -c|--conversation) compopt +o default 2>/dev/null; return ;;
                --scope) COMPREPLY=($(compgen -W "project conversation" -- "$cur")); return ;;
                --type) COMPREPLY=($(compgen -W "project pattern reference conversation" -- "$cur")); return ;;
            esac
            COMPREPLY=($(compgen -W "--from -t --tenant -c --conversation --scope --type --dry-run --json -h --help" -- "$cur"))
            ;;
        list)
            case "$prev" in
                --type) COMPREPLY=($(compgen -W "project pattern reference conversation" -- "$cur")); return ;;
                --limit) compopt +o default 2>/dev/null; return ;;
                --cursor) compopt +o default 2>/dev/null; return ;;
                --tag) compopt +o default 2>/dev/null; return ;;
                --since) compopt +o default 2>/dev/null; return ;;
                --until) compopt +o default 2>/dev/null; return ;;
                -t|--tenant) compopt +o default 2>/dev/null; return ;;
                -c|--conversation) compopt +o default 2>/dev/null; return ;;
            esac
            COMPREPLY=($(compgen -W "--type --limit --cursor --all --tag --since --until -t --tenant -c --conversation --json -h --help" -- "$cur"))
            ;;
        oauth)
            case "$prev" in
                --token-file) compopt +o default 2>/dev/null; return ;;
                -t|--tenant) compopt +o default 2>/dev/null; return ;;
            esac
            COMPREPLY=($(compgen -W "--token-file -t --tenant -h --help" -- "$cur"))
            ;;
        recall)
            case "$prev" in
                --limit) compopt +o default 2>/dev/null; return ;;
                --mode) COMPREPLY=($(compgen -W "precision balanced exploratory" -- "$cur")); return ;;
                --type) COMPREPLY=($(compgen -W "project pattern reference conversation" -- "$cur")); return ;;
                --tag) compopt +o default 2>/dev/null; return ;;
                --since) compopt +o default 2>/dev/null; return ;;
                --until) compopt +o default 2>/dev/null; return ;;
                -t|--tenant) compopt +o default 2>/dev/null; return ;;
                -c|--conversation) compopt +o default 2>/dev/null; return ;;
            esac
            COMPREPLY=($(compgen -W "--limit --mode --type --tag --since --until -t --tenant -c --conversation --json -h --help" -- "$cur"))
            ;;
        remember)
            case "$prev" in
                --type) COMPREPLY=($(compgen -W "project pattern reference conversation" -- "$cur")); return ;;
                --category) compopt +o default 2>/dev/null; return ;;
                --tag) compopt +o default 2>/dev/null; return ;;
                --scope) COMPREPLY=($(compgen -W "project conversation" -- "$cur")); return ;;
                --replaces) compopt +o default 2>/dev/null; return ;;
                -t|--tenant) compopt +o default 2>/dev/null; return ;;
                -c|--conversation) compopt +o default 2>/dev/null; return ;;
            esac
            COMPREPLY=($(compgen -W "--type --category --tag --scope --replaces -t --tenant -c --conversation --json -h --help" -- "$cur"))
            ;;
        serve-http)
            case "$prev" in
                --host) compopt +o default 2>/dev/null; return ;;
                --port) compopt +o default 2>/dev/null; return ;;
            esac
            COMPREPLY=($(compgen -W "--host --port -h --help" -- "$cur"))
            ;;
        serve-stdio)
            case "$prev" in
                -t|--tenant) compopt +o default 2>/dev/null; return ;;
                -c|--conversation) compopt +o default 2>/dev/null; return ;;
            esac
            COMPREPLY=($(compgen -W "-t --tenant -c --conversation -h --help" -- "$cur"))
            ;;
        stats)
            case "$prev" in
                -t|--tenant) compopt +o default 2>/dev/null; return ;;
                -c|--conversation) compopt +o default 2>/dev/null; return ;;
            esac
            COMPREPLY=($(compgen -W "-t --tenant -c --conversation --all-tenants --json -h --help" -- "$cur"))
            ;;
        ui)
            case "$prev" in
                -t|--tenant) compopt +o default 2>/dev/null; return ;;
                -c|--conversation) compopt +o default 2>/dev/null; return ;;
                --port) compopt +o default 2>/dev/null; return ;;
            esac
            COMPREPLY=($(compgen -W "-t --tenant -c --conversation --all-tenants --no-browser --port -h --help" -- "$cur"))
            ;;
    esac
}

complete -o default -F _mcp_memory mcp-memory mcp-tenant-memory
