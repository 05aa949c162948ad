"""From an upstream issue to a case that is shown to catch its bug: import a reporter's paste as a
draft, reduce it, and verify each case at its bad and good ends against the ledger."""
