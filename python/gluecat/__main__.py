import sys

from gluecat.cli import main

sys.exit(main())
