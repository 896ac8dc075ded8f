"""The programs we run: the one subprocess helper (`proc`: a program run to its end, or spawned
to live on), the pinned TypeScript compilers (`compilers`) and other pinned npm packages (`npm`)."""
