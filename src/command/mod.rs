//! Directive body → argv (shell-word rules, shell syntax rejected) and command patterns. Pure.
