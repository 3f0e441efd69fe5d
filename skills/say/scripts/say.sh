#!/usr/bin/env bash
# Speak TEXT aloud with the first speech engine found: say (macOS), espeak-ng, espeak or
# spd-say (Linux).
#
# Usage: say.sh TEXT...
# Exit status: 0 spoken; 2 no text; 69 no speech engine (a one-line message on stderr).
set -u

text="${*:-}"  # ${*:-}: bash 3.2 treats an empty $* as unbound under set -u
if [ -z "${text// /}" ]; then
    echo "say.sh: nothing to say (usage: say.sh TEXT)" >&2
    exit 2
fi
# A leading space stops engines from reading text that starts with '-' as an option.
case "$text" in
    -*) text=" $text" ;;
esac

if command -v say >/dev/null 2>&1; then
    exec say "$text"
elif command -v espeak-ng >/dev/null 2>&1; then
    exec espeak-ng "$text"
elif command -v espeak >/dev/null 2>&1; then
    exec espeak "$text"
elif command -v spd-say >/dev/null 2>&1; then
    # -w waits until the speech is done, so the run lasts as long as the speech.
    exec spd-say -w "$text"
fi

echo "say.sh: no speech engine found (tried say, espeak-ng, espeak, spd-say); not spoken: $*" >&2
exit 69
