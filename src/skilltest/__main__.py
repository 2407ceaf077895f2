from skilltest.cli import main

raise SystemExit(main())
