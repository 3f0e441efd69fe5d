#!/usr/bin/env bash
# Show a desktop notification with TITLE and MESSAGE: notify-send (Linux) or osascript
# (macOS); without either, ring the terminal bell if the terminal can be opened.
#
# Usage: notify.sh TITLE [MESSAGE...]
# Exit status: 0 notified (or the bell rang); 2 no title; 69 nothing reached the user (a
# one-line reason on stderr).
set -u

if [ $# -lt 1 ] || [ -z "$1" ]; then
    echo "notify.sh: usage: notify.sh TITLE [MESSAGE]" >&2
    exit 2
fi
title="$1"
shift
message="${*:-}"  # ${*:-}: bash 3.2 treats an empty $* as unbound under set -u

if command -v notify-send >/dev/null 2>&1; then
    # "--" ends options, so a title starting with '-' is shown as text.
    if notify-send -- "$title" "$message" 2>/dev/null; then
        exit 0
    fi
fi
if command -v osascript >/dev/null 2>&1; then
    # The texts are passed as arguments, never spliced into the AppleScript source. They are
    # taken from the end of argv, whether or not osascript passes the "--" on.
    if osascript -e 'on run argv' \
        -e 'display notification (item -1 of argv) with title (item -2 of argv)' \
        -e 'end run' -- "$title" "$message" >/dev/null 2>&1; then
        exit 0
    fi
fi

# Fallback: the terminal bell, when the script may open the terminal (never in skillpipe's
# sandbox, which gives scripts no terminal).
if { printf '\a' >/dev/tty; } 2>/dev/null; then
    exit 0
fi
# Nothing reached the user: say so, and what would let it through, instead of succeeding.
if command -v notify-send >/dev/null 2>&1; then
    why="notify-send could not reach the session bus (a sandboxed script needs the bus socket: --allow-socket \"\$XDG_RUNTIME_DIR/bus\", with XDG_RUNTIME_DIR passed through)"
else
    why="no notification service found (tried notify-send, osascript)"
fi
echo "notify.sh: $why; not shown: $title${message:+: $message}" >&2
exit 69
