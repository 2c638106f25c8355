from tpucheck.cli import main

main()
