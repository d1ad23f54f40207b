; Inno Setup script: the Windows installer of the built app (dist\Baton from build.ps1).
; iscc /DVersion=0.1.0 packaging\windows\baton.iss  ->  dist\baton-0.1.0-windows-setup.exe
; Per-user by default (no administrator needed); Start menu entry, optional desktop icon, the
; .jsonl run files and transcripts open with Baton, and an uninstaller that removes all of it.
#ifndef Version
  #define Version "0.0.0"
#endif

[Setup]
AppId={{6E0C7D0B-5B9A-4B5E-9E5B-BA7015000001}
AppName=Baton
AppVersion={#Version}
AppPublisher=Baton
DefaultDirName={autopf}\Baton
DefaultGroupName=Baton
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
OutputDir=..\..\dist
OutputBaseFilename=baton-{#Version}-windows-setup
SetupIconFile=..\..\build\icons\baton.ico
UninstallDisplayIcon={app}\Baton.exe
Compression=lzma2
SolidCompression=yes
ArchitecturesInstallIn64BitMode=x64compatible
ChangesAssociations=yes

[Tasks]
Name: "desktopicon"; Description: "Create a desktop icon"; Flags: unchecked

[Files]
Source: "..\..\dist\Baton\*"; DestDir: "{app}"; Flags: recursesubdirs createallsubdirs ignoreversion

[Icons]
Name: "{group}\Baton"; Filename: "{app}\Baton.exe"
Name: "{autodesktop}\Baton"; Filename: "{app}\Baton.exe"; Tasks: desktopicon

[Registry]
Root: HKA; Subkey: "Software\Classes\Baton.RunFile"; ValueType: string; ValueData: "Baton run or transcript"; Flags: uninsdeletekey
Root: HKA; Subkey: "Software\Classes\Baton.RunFile\DefaultIcon"; ValueType: string; ValueData: "{app}\Baton.exe,0"
Root: HKA; Subkey: "Software\Classes\Baton.RunFile\shell\open\command"; ValueType: string; ValueData: """{app}\Baton.exe"" open ""%1"""
Root: HKA; Subkey: "Software\Classes\.jsonl\OpenWithProgids"; ValueType: string; ValueName: "Baton.RunFile"; ValueData: ""; Flags: uninsdeletevalue

[Run]
Filename: "{app}\Baton.exe"; Description: "Start Baton"; Flags: nowait postinstall skipifsilent
