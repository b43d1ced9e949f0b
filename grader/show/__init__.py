"""What people see: the command line, reports, access maps, progress and Gradescope's file."""
