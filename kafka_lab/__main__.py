import sys

from kafka_lab.cli import main

sys.exit(main())
