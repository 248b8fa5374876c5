"""kgc: the command line and, later, the gate that orchestrates every checker."""
