#!/usr/bin/env bash
# Show a desktop notification with TITLE and MESSAGE: notify-send (Linux) or osascript
# (macOS); without either, ring the terminal bell and print the notification on stderr.
#
# Usage: notify.sh TITLE [MESSAGE...]
# Exit status: 0 notified (or bell fallback); 2 no title.
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

# Fallback: the terminal bell, then the text where the user can see it.
{ printf '\a' >/dev/tty; } 2>/dev/null || printf '\a' >&2
if [ -n "$message" ]; then
    echo "notify: $title: $message" >&2
else
    echo "notify: $title" >&2
fi
exit 0
