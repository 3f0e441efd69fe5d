#!/usr/bin/env bash
# Scores how well a model uses skillpipe's directives (issues #13, #34): right directive (every
# one a case needs), false trigger, result used, empty answer, from each case's audit log, on
# scripts/eval/tune.json (default) or the held-out scripts/eval/heldout.json, which nobody reads
# while changing prompts (the rule at the top of scripts/eval_model.py). Any
# OpenAI-compatible endpoint; defaults to the local llama.cpp server of docs/model-fit-and-evaluation.md.
# Usage: scripts/eval-model.sh [--base-url URL] [--model NAME] [--out DIR] [--only ID] [--tools] ...
# SKILLPIPE_BIN=path scores another build (e.g. an older one) instead of target/debug/skillpipe.
set -euo pipefail
cd "$(dirname "$0")/.."
case " $* " in
  *" -h "*|*" --help "*) exec python3 scripts/eval_model.py "$@" ;;
esac
# Built first unless another binary is named (SKILLPIPE_BIN or --bin); the first build takes minutes.
case " $* " in
  *" --bin "*|*" --bin="*) ;;
  *) [ -n "${SKILLPIPE_BIN:-}" ] || cargo build ;;
esac
exec python3 scripts/eval_model.py "$@"
