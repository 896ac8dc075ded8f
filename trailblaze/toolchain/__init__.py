"""The programs we run: the one subprocess helper (`proc`), the pinned TypeScript compilers
(`compilers`) and other pinned npm packages (`npm`)."""
