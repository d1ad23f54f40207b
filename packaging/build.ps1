# Build the double-clickable app into dist\Baton\ (Baton.exe) with the current Python.
# Installs PyInstaller (and Baton itself) into that environment if they are missing.
$ErrorActionPreference = "Stop"
Set-Location (Join-Path $PSScriptRoot "..")
$python = if ($env:VIRTUAL_ENV) { Join-Path $env:VIRTUAL_ENV "Scripts\python.exe" }
          elseif (Test-Path ".venv\Scripts\python.exe") { ".venv\Scripts\python.exe" }
          else { "python" }
$timer = [Diagnostics.Stopwatch]::StartNew()
& $python -c "import core, PySide6" 2>$null; if ($LASTEXITCODE -ne 0) { & $python -m pip install -q -e . }
& $python -c "import PyInstaller" 2>$null; if ($LASTEXITCODE -ne 0) { & $python -m pip install -q "pyinstaller>=6.6" }
$env:QT_QPA_PLATFORM = "offscreen"
& $python packaging\make_icons.py build\icons
Remove-Item Env:\QT_QPA_PLATFORM
& $python -m PyInstaller --noconfirm --clean --log-level WARN --distpath dist --workpath build\pyinstaller packaging\baton.spec
if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
$size = "{0:N0} MB" -f ((Get-ChildItem dist\Baton -Recurse | Measure-Object Length -Sum).Sum / 1MB)
Write-Host "Built dist\Baton ($size) in $([int]$timer.Elapsed.TotalSeconds) s"
