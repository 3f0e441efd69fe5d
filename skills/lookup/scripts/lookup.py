#!/usr/bin/env python3
"""Look up an English word in the skill's bundled dictionary (about 100 words).

Usage: lookup.py WORD
Prints "word: definition" (or a not-found line with close matches), then a JSON object on
the last line: {"word": ..., "found": true|false, "definition": ..., "suggestions": [...]}.
Exit status: 0 found or not found; 2 usage error or unreadable dictionary.
"""

import difflib
import json
import os
import sys


def load_dictionary():
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, os.pardir, "assets", "dictionary.json")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def normalise(text):
    return text.strip().strip(".,;:!?\"'()[]").lower()


def main(argv):
    if len(argv) < 2 or not " ".join(argv[1:]).strip():
        print("usage: lookup.py WORD", file=sys.stderr)
        return 2
    word = normalise(" ".join(argv[1:]))
    try:
        dictionary = load_dictionary()
    except (OSError, ValueError) as e:
        print("lookup.py: cannot read the dictionary: %s" % e, file=sys.stderr)
        return 2

    definition = dictionary.get(word)
    if definition is not None:
        print("%s: %s" % (word, definition))
        result = {"word": word, "found": True, "definition": definition}
    else:
        suggestions = difflib.get_close_matches(word, list(dictionary), n=3, cutoff=0.75)
        if suggestions:
            print("%s: not in the dictionary; did you mean %s?" % (word, ", ".join(suggestions)))
        else:
            print("%s: not in the dictionary" % word)
        result = {"word": word, "found": False, "definition": None, "suggestions": suggestions}
    print(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
