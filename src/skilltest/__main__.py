from skilltest.cli import console

console()
