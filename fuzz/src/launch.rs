//! Several clients sharing one corpus (LibAFL's launcher and broker): not wired yet.
