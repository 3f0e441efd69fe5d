//! One directive from parse to result: policy decision, confirmation, audit, run.
