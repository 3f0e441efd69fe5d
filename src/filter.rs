//! The Unix filter pipeline (DESIGN §9): stdin → scanner → stdout, directives run.
