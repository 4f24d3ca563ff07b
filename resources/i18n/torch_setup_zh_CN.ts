<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>BenchChart</name>
    <message>
        <location filename="../../app/gui/charts.py" line="+302"/>
        <source>Matrix multiply speed</source>
        <translation>矩阵乘法速度</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Matrix size (n × n)</source>
        <translation>矩阵大小（n × n）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>GFLOP/s (log scale)</source>
        <translation>GFLOP/s（对数坐标）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Chart of GFLOP/s against matrix size</source>
        <translation>不同矩阵大小下的 GFLOP/s 图表</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Higher is faster; both axes are logarithmic.</source>
        <translation>越高越快；两条坐标轴都是对数刻度。</translation>
    </message>
    <message>
        <location line="-207"/>
        <source>{device} · {dtype}</source>
        <translation>{device} · {dtype}</translation>
    </message>
    <message>
        <location line="+52"/>
        <source>spread of the runs</source>
        <translation>各次运行的离散范围</translation>
    </message>
    <message>
        <location line="+36"/>
        <location line="+125"/>
        <source>estimated peak · {dtype}</source>
        <translation>估算峰值 · {dtype}</translation>
    </message>
    <message>
        <location line="-16"/>
        <source>Matrix multiply speed on {device}</source>
        <translation>{device} 上的矩阵乘法速度</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Speed-up over the CPU</source>
        <translation>相对 CPU 的加速比</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Chart of the accelerator&apos;s speed-up over the CPU</source>
        <translation>加速器相对 CPU 的加速比图表</translation>
    </message>
    <message>
        <location line="-67"/>
        <source>× faster than the CPU</source>
        <translation>比 CPU 快的倍数</translation>
    </message>
</context>
<context>
    <name>ChangeDialog</name>
    <message>
        <location filename="../../app/gui/pages/recommendation.py" line="+333"/>
        <source>Automatic</source>
        <translation>自动</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Processor (CPU)</source>
        <translation>处理器（CPU）</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>NVIDIA (CUDA)</source>
        <translation>NVIDIA（CUDA）</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>AMD (ROCm)</source>
        <translation>AMD（ROCm）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Apple (Metal)</source>
        <translation>Apple（Metal）</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Intel (XPU)</source>
        <translation>Intel（XPU）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>{build} (standard build, on the processor)</source>
        <translation>{build}（标准版，在处理器上运行）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Newest that fits</source>
        <translation>能用的最新版本</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>With it: torch {torch}; without it: torch {newer}.</source>
        <translation>选上它：torch {torch}；不选它：torch {newer}。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>These choices give: {summary}</source>
        <translation>这些选择得到：{summary}</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Use the nearest working choice: {choice}</source>
        <translation>使用最接近的可行选择：{choice}</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>Not available on this computer:</source>
        <translation>这台电脑上不可用：</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>Change the PyTorch build</source>
        <translation>更改 PyTorch 版本</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Runs on:</source>
        <translation>运行在(&amp;R)：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Build (wheel index):</source>
        <translation>构建版本（wheel 索引）(&amp;B)：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;PyTorch version:</source>
        <translation>PyTorch 版本(&amp;P)：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>P&amp;ython:</source>
        <translation>Python(&amp;Y)：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Also install:</source>
        <translation>同时安装：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Other packages:</source>
        <translation>其他软件包(&amp;O)：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Runs on</source>
        <translation>运行在</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Build</source>
        <translation>构建版本</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>PyTorch version</source>
        <translation>PyTorch 版本</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Python version of the new environment</source>
        <translation>新环境的 Python 版本</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Other packages, separated by spaces</source>
        <translation>其他软件包，用空格分隔</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Choices not available on this computer, and why</source>
        <translation>这台电脑上不可用的选项及原因</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Use the nearest working choice</source>
        <translation>使用最接近的可行选择</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Use the recommendation</source>
        <translation>使用推荐设置</translation>
    </message>
</context>
<context>
    <name>CopyButton</name>
    <message>
        <location filename="../../app/gui/widgets.py" line="+353"/>
        <source>Copied</source>
        <translation>已复制</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Copy to the clipboard</source>
        <translation>复制到剪贴板</translation>
    </message>
</context>
<context>
    <name>DonePage</name>
    <message>
        <location filename="../../app/gui/pages/done.py" line="+278"/>
        <source>Report saved in: {folders}</source>
        <translation>报告已保存在：{folders}</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Installed: PyTorch {version}{build} in {path}</source>
        <translation>已安装：PyTorch {version}{build}，位于 {path}</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Python: {python}</source>
        <translation>Python：{python}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Installation took {s:.0f} s.</source>
        <translation>安装用时 {s:.0f} 秒。</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Verification: {passed} passed, {failed} failed, {skipped} skipped.</source>
        <translation>验证：{passed} 项通过，{failed} 项失败，{skipped} 项跳过。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Verification: not run.</source>
        <translation>验证：未运行。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Speed (partial, the test was stopped): {headline}</source>
        <translation>速度（部分结果，测试被中止）：{headline}</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Speed: {headline}</source>
        <translation>速度：{headline}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Speed test: skipped.</source>
        <translation>速度测试：已跳过。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>PyTorch was not installed.</source>
        <translation>PyTorch 没有安装。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>PyTorch {version} is ready.</source>
        <translation>PyTorch {version} 已经可以使用了。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>PyTorch {version} is installed, but some checks failed. The report holds the diagnosis.</source>
        <translation>PyTorch {version} 已安装，但有些检查没有通过。报告里有诊断结果。</translation>
    </message>
    <message>
        <location line="+79"/>
        <source>Registering the Jupyter kernel…</source>
        <translation>正在注册 Jupyter 内核…</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Registered: “{name}” appears in Jupyter&apos;s kernel list.</source>
        <translation>已注册：“{name}”会出现在 Jupyter 的内核列表中。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>The kernel was not registered: {why}</source>
        <translation>内核没有注册成功：{why}</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Command that activates the environment in {shell}</source>
        <translation>在 {shell} 中激活环境的命令</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>VS Code setting for this interpreter</source>
        <translation>指定这个解释器的 VS Code 设置</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Path of the environment&apos;s Python interpreter</source>
        <translation>环境中 Python 解释器的路径</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Command that installs ipykernel</source>
        <translation>安装 ipykernel 的命令</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Command that registers the Jupyter kernel</source>
        <translation>注册 Jupyter 内核的命令</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Register as a Jupyter kernel</source>
        <translation>注册为 Jupyter 内核</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Register the environment as a Jupyter kernel</source>
        <translation>把这个环境注册为 Jupyter 内核</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Installs ipykernel from the same sources as PyTorch, then registers the kernel for your user (the commands above).</source>
        <translation>从安装 PyTorch 的同一安装源安装 ipykernel，然后为当前用户注册内核（即上面的命令）。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>VS Code: open the Command Palette, run “Python: Select Interpreter” and choose the interpreter below (or “Enter interpreter path…”). To make it the default, add this line to settings.json:</source>
        <translation>VS Code：打开命令面板，运行“Python: Select Interpreter”，选择下面的解释器（或选“Enter interpreter path…”）。要把它设为默认，在 settings.json 中加入这一行：</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>PyCharm: Settings → Project → Python Interpreter → Add Interpreter → Add Local Interpreter → select existing, and pick this interpreter:</source>
        <translation>PyCharm：设置 → 项目 → Python 解释器 → 添加解释器 → 添加本地解释器 → 选择现有的，然后选中这个解释器：</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Jupyter: the environment becomes a notebook kernel once it has the ipykernel package. The button runs these commands: it installs ipykernel from the same sources as PyTorch, then registers the kernel.</source>
        <translation>Jupyter：环境装上 ipykernel 包后就能作为笔记本内核使用。下面的按钮会运行这些命令：先从安装 PyTorch 的同一安装源安装 ipykernel，再注册内核。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Use it from a terminal (activate the environment)</source>
        <translation>在终端中使用（激活环境）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Use it from an editor or a notebook</source>
        <translation>在编辑器或笔记本中使用</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open folder</source>
        <translation>打开文件夹</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Open the environment&apos;s folder</source>
        <translation>打开环境所在的文件夹</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save report as…</source>
        <translation>报告另存为…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save the report as HTML, Markdown and JSON</source>
        <translation>把报告保存为 HTML、Markdown 和 JSON</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open report</source>
        <translation>打开报告</translation>
    </message>
    <message>
        <location line="-363"/>
        <source>Done</source>
        <extracomment>the page&apos;s title and subtitle (translated by :meth:`BasePage.titles`)</extracomment>
        <translation>完成</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>PyTorch is installed. Here is how to use it.</source>
        <translation>PyTorch 已经装好了。下面是使用方法。</translation>
    </message>
    <message>
        <location line="+119"/>
        <source>Web page (*.html)</source>
        <translation>网页 (*.html)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Markdown (*.md)</source>
        <translation>Markdown 文本 (*.md)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>JSON (*.json)</source>
        <translation>JSON 数据 (*.json)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Save the report as</source>
        <translation>将报告另存为</translation>
    </message>
    <message>
        <location line="+65"/>
        <source>Downloaded from: {sources}</source>
        <translation>下载来源：{sources}</translation>
    </message>
</context>
<context>
    <name>EarlyDownloads</name>
    <message>
        <location filename="../../app/gui/pages/_common.py" line="+96"/>
        <source>Getting the build ready to download while you read…</source>
        <translation>正在准备在你阅读时下载这个版本…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Downloading the build while you read: {done} of {total}.</source>
        <translation>正在你阅读时下载这个版本：已下载 {done}，共 {total}。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>The build is downloaded ({total}): the install will not wait for it.</source>
        <translation>这个版本已下载完毕（{total}）：安装时无需再等待下载。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Not downloaded early: {why}</source>
        <translation>未提前下载：{why}</translation>
    </message>
</context>
<context>
    <name>EnvTaskPage</name>
    <message>
        <location filename="../../app/gui/pages/env_task.py" line="+240"/>
        <source>no PyTorch</source>
        <extracomment>The rows each task shows: (key, the Phase (or step name) that drives it).</extracomment>
        <translation>没有 PyTorch</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Now: {build}</source>
        <translation>现在：{build}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>New: {packages}</source>
        <translation>新版本：{packages}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{count} other package(s) are kept at their versions.</source>
        <translation>其他 {count} 个包保持原版本。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The new stack is built and checked in {staging}; your environment changes only if it passes.</source>
        <translation>新版本先在 {staging} 中安装并检查；只有检查通过，你的环境才会改变。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>From: {index}</source>
        <translation>来源：{index}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Reinstall: {packages}</source>
        <translation>重新安装：{packages}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The other packages stay. The environment is recorded first and put back if anything fails.</source>
        <translation>其他包保持不变。会先记录环境的状态，出错时恢复原样。</translation>
    </message>
    <message>
        <location line="+175"/>
        <source>Cancelling… the environment is being put back as it was.</source>
        <translation>正在取消……正在把环境恢复原样。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>This can take a few minutes; Cancel stops it and leaves the environment as it was.</source>
        <translation>这可能需要几分钟；点“取消”会停止它，并让环境保持原样。</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>What to do:</source>
        <translation>怎么做：</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Full log: {path}</source>
        <translation>完整日志：{path}</translation>
    </message>
    <message>
        <location line="-21"/>
        <source>Cancelled. The environment was left as it was.</source>
        <translation>已取消。环境保持原样。</translation>
    </message>
    <message>
        <location line="+30"/>
        <source>The upgrade is kept; the old environment was deleted.</source>
        <translation>已保留升级；旧环境已删除。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The upgrade was undone: the environment is back as it was before.</source>
        <translation>已撤销升级：环境恢复到了升级之前的样子。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>The verification could not run: {why}</source>
        <translation>验证无法运行：{why}</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>PyTorch {version} works here: {passed} checks passed.</source>
        <translation>PyTorch {version} 在这里可以正常工作：{passed} 项检查通过。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Problems were found; see below.</source>
        <translation>发现了问题，见下方。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Repaired: PyTorch {version} is installed and verified; the torch guard protects it.</source>
        <translation>已修复：PyTorch {version} 已安装并通过验证；torch 防护会保护它。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Upgraded from torch {old} to {new}, verified before the swap. The old environment is kept at {path} until you choose.</source>
        <translation>已从 torch {old} 升级到 {new}，切换前已通过验证。在你作出选择之前，旧环境保留在 {path}。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>The doctor found nothing to fix.</source>
        <translation>诊断没有发现需要修复的问题。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Fix:</source>
        <translation>解决方法：</translation>
    </message>
    <message>
        <location line="+40"/>
        <source>Checking an environment</source>
        <translation>检查环境</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Repairing an environment</source>
        <translation>修复环境</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Upgrading PyTorch safely</source>
        <translation>安全地升级 PyTorch</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>PyTorch is run inside the environment, then the doctor looks for anything that stops it from using the graphics card.</source>
        <translation>在环境中运行 PyTorch，然后由诊断程序查找妨碍它使用显卡的原因。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The right PyTorch build for this computer is reinstalled; your other packages stay.</source>
        <translation>重新安装适合这台电脑的 PyTorch 版本；你的其他包保持不变。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The new PyTorch is built next to the environment and checked there first; only then is it swapped in, and you can still go back.</source>
        <translation>新的 PyTorch 先在环境旁边安装并检查；通过后才会切换过去，而且你仍然可以退回。</translation>
    </message>
    <message>
        <location line="-38"/>
        <source>Run PyTorch in the environment</source>
        <translation>在环境中运行 PyTorch</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Look for problems</source>
        <translation>查找问题</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Decide what to install</source>
        <translation>确定要安装的内容</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Record the installed packages</source>
        <translation>记录已安装的包</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Create the staging environment</source>
        <translation>创建暂存环境</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Install</source>
        <translation>安装</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Swap the new environment in</source>
        <translation>切换到新环境</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Check the new PyTorch in the staging environment</source>
        <translation>在暂存环境中检查新的 PyTorch</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>PyTorch version:</source>
        <translation>PyTorch 版本：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>default: the newest that fits</source>
        <translation>默认：适合的最新版本</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>default: the verified one</source>
        <translation>默认：验证过的版本</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>PyTorch index:</source>
        <translation>PyTorch 索引：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>default: the one the environment came from</source>
        <translation>默认：该环境原来的来源</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Extra indexes:</source>
        <translation>附加索引：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Local wheels folder:</source>
        <translation>本地安装包文件夹：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Plan again</source>
        <translation>重新规划</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Advanced: version and package sources</source>
        <translation>高级：版本和包的来源</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Start the upgrade</source>
        <translation>开始升级(&amp;S)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Start the repair</source>
        <translation>开始修复(&amp;S)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Keep the upgrade (delete the old copy)</source>
        <translation>保留升级（删除旧副本）(&amp;K)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Undo the upgrade</source>
        <translation>撤销升级(&amp;U)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Check</source>
        <translation>检查项</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Verification checklist</source>
        <translation>验证清单</translation>
    </message>
</context>
<context>
    <name>EnvironmentPage</name>
    <message>
        <location filename="../../app/gui/pages/environment.py" line="+267"/>
        <source>Choose the existing environment</source>
        <translation>选择已有的环境</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Choose where to create the environment</source>
        <translation>选择创建环境的位置</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Choose a folder</source>
        <translation>选择文件夹</translation>
    </message>
    <message>
        <location line="+76"/>
        <source>Give the environment a name: the name of the new folder inside {location}, such as {example}.</source>
        <translation>请给环境起一个名称：即 {location} 中新文件夹的名称，例如 {example}。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>The name “{name}” is not one folder name: it would put the environment outside {location}. Use a plain name such as torch-env; to put it somewhere else, change Location.</source>
        <translation>名称“{name}”不是一个单独的文件夹名：它会把环境放到 {location} 之外。请用一个简单的名称，例如 torch-env；要放到别处，请修改“位置”。</translation>
    </message>
    <message>
        <location line="+36"/>
        <source>PyTorch will be added to the environment in {path}.</source>
        <translation>PyTorch 将安装到 {path} 中的已有环境。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The new environment will be created in {path}.</source>
        <translation>新环境将创建在 {path}。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{free} free there.</source>
        <translation>该位置剩余 {free}。</translation>
    </message>
    <message>
        <location line="+132"/>
        <source>How to make it</source>
        <translation>创建方式</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;uv virtual environment (fastest; recommended)</source>
        <translation>uv 虚拟环境（最快，推荐）(&amp;U)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Python venv with pip (the standard tools)</source>
        <translation>Python venv + pip（标准工具）(&amp;P)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;conda environment (with {tool})</source>
        <translation>conda 环境（使用 {tool}）(&amp;C)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Add to an existing environment instead of creating a new one</source>
        <translation>安装到已有的环境，而不是新建一个(&amp;A)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Add to an existing environment</source>
        <translation>安装到已有的环境</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Environment &amp;folder:</source>
        <translation>环境文件夹(&amp;F)：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Location:</source>
        <translation>位置(&amp;L)：</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Location</source>
        <translation>位置</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Environment name</source>
        <translation>环境名称</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Na&amp;me:</source>
        <translation>名称(&amp;M)：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>P&amp;ython:</source>
        <translation>Python(&amp;Y)：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Python version for the environment</source>
        <translation>环境使用的 Python 版本</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Choose the location</source>
        <translation>选择位置</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Choose the local wheels folder</source>
        <translation>选择本地 wheel 文件夹</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Choose the offline bundle folder</source>
        <translation>选择离线安装包文件夹</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Local &amp;wheels folder:</source>
        <translation>本地 wheel 文件夹(&amp;W)：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Local wheels folder</source>
        <translation>本地 wheel 文件夹</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>install without the internet from a bundle</source>
        <translation>不联网，从离线安装包安装</translation>
    </message>
    <message>
        <location line="-1"/>
        <source>Offline bundle folder</source>
        <translation>离线安装包文件夹</translation>
    </message>
    <message>
        <location line="-1"/>
        <source>Offline bundl&amp;e folder:</source>
        <translation>离线安装包文件夹(&amp;E)：</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>&amp;Install</source>
        <translation>安装(&amp;I)</translation>
    </message>
    <message>
        <location line="-447"/>
        <source>Environment</source>
        <extracomment>the page&apos;s title and subtitle (translated by :meth:`BasePage.titles`)</extracomment>
        <translation>环境</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>PyTorch goes into its own Python environment: a folder with its own Python and packages, so nothing else on this computer changes.</source>
        <translation>PyTorch 会装进一个独立的 Python 环境：一个拥有自己的 Python 和软件包的文件夹，电脑上的其他东西都不会改变。</translation>
    </message>
    <message>
        <location line="+429"/>
        <source>Install from files on this computer</source>
        <translation>从本机文件安装</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>No internet here? A folder with the PyTorch wheel files (.whl) and the packages they need, or an offline bundle made by this assistant on a computer with internet, installs without it.</source>
        <translation>这里没有网络？一个存放 PyTorch wheel 文件（.whl）及其所需软件包的文件夹，或者由本助手在能联网的电脑上制作的离线安装包，都可以不联网安装。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>a folder with .whl files; several: separate them with ;</source>
        <translation>存放 .whl 文件的文件夹；多个文件夹用 ; 分隔</translation>
    </message>
</context>
<context>
    <name>EnvironmentsPage</name>
    <message>
        <location filename="../../app/gui/pages/environments.py" line="+64"/>
        <source>Your PyTorch environments</source>
        <extracomment>status -&gt; icon the page&apos;s title and subtitle (translated by :meth:`BasePage.titles`)</extracomment>
        <translation>你的 PyTorch 环境</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The environments this assistant made (★) and the PyTorch environments found on this computer. Choose one to check, repair or upgrade it.</source>
        <translation>本助手创建的环境（★）以及在这台电脑上找到的 PyTorch 环境。选择一个进行检查、修复或升级。</translation>
    </message>
    <message>
        <location line="+129"/>
        <source>never</source>
        <translation>从未</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>CPU only</source>
        <translation>仅 CPU</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>Found by: {how}</source>
        <translation>发现途径：{how}</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Made by this assistant</source>
        <translation>由本助手创建</translation>
    </message>
    <message>
        <location line="-12"/>
        <source>Torch guard: on</source>
        <translation>torch 防护：开启</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Torch guard: off</source>
        <translation>torch 防护：关闭</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Jupyter kernel: {name}</source>
        <translation>Jupyter 内核：{name}</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>This assistant installed into it (it did not make it)</source>
        <translation>本助手曾向其中安装（但不是由本助手创建的）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Checked by this assistant (it did not make it)</source>
        <translation>本助手检查过它（但不是由本助手创建的）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Not in this assistant&apos;s list of the environments it made</source>
        <translation>不在本助手所创建环境的列表中</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>this assistant&apos;s list</source>
        <translation>本助手的列表</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>the current folder</source>
        <translation>当前文件夹</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>a Python interpreter on this computer</source>
        <translation>这台电脑上的一个 Python 解释器</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Remove the Jupyter kernel</source>
        <translation>删除 Jupyter 内核</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Add a Jupyter kernel</source>
        <translation>添加 Jupyter 内核</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>What to do:</source>
        <translation>怎么做：</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>Adding a Jupyter kernel for {path}…</source>
        <translation>正在为 {path} 添加 Jupyter 内核……</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Jupyter now offers the kernel &quot;{name}&quot;.</source>
        <translation>Jupyter 现在提供内核“{name}”。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>The Jupyter kernel was removed ({folder}).</source>
        <translation>Jupyter 内核已删除（{folder}）。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>{path} was removed.</source>
        <translation>{path} 已删除。</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>A terminal opened with {path} active.</source>
        <translation>已打开一个激活了 {path} 的终端。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>No terminal program was found. In a terminal, run:
{command}</source>
        <translation>没有找到终端程序。请在终端中运行：
{command}</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>This deletes:
{summary}</source>
        <translation>将删除：
{summary}</translation>
    </message>
    <message>
        <location line="-75"/>
        <source>{path} is not in this assistant&apos;s list of the environments it made, so it is not removed. If it is the environment you mean, tick “{option}” and press Remove again.</source>
        <translation>{path} 不在本助手所创建环境的列表中，因此不会被删除。如果它正是你要删除的环境，请勾选“{option}”，然后再次点击“删除”。</translation>
    </message>
    <message>
        <location line="+77"/>
        <source>This environment is not in this assistant&apos;s list of the environments it made.</source>
        <translation>此环境不在本助手所创建环境的列表中。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Delete the environment?</source>
        <translation>删除这个环境吗？</translation>
    </message>
    <message>
        <location line="+45"/>
        <source>Looking for environments…</source>
        <translation>正在查找环境……</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Environment</source>
        <translation>环境</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>PyTorch</source>
        <translation>PyTorch</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Runs on</source>
        <translation>运行于</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Python</source>
        <translation>Python</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Last check</source>
        <translation>上次检查</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Environments</source>
        <translation>环境</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>No PyTorch environment was found. Go back and choose &quot;Set up a new environment&quot; to make one.</source>
        <translation>没有找到 PyTorch 环境。请返回并选择“建立新环境”来创建一个。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Check</source>
        <translation>检查(&amp;C)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run the verification and the doctor in this environment</source>
        <translation>在这个环境中运行验证和诊断</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Repair</source>
        <translation>修复(&amp;R)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Reinstall the right PyTorch build for this computer, keeping the other packages</source>
        <translation>重新安装适合这台电脑的 PyTorch 版本，保留其他包</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Upgrade</source>
        <translation>升级(&amp;U)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Build a newer PyTorch next to it, check it, then swap it in (undoable)</source>
        <translation>在旁边安装较新的 PyTorch 并检查，然后切换过去（可撤销）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open a &amp;terminal here</source>
        <translation>在这里打开终端(&amp;T)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Re&amp;move</source>
        <translation>删除(&amp;M)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Remove it even though it is not in this assistant&apos;s list</source>
        <translation>即使它不在本助手的列表中，也删除它</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Only for an environment you are sure of: everything in its folder is deleted</source>
        <translation>只用于你确定的环境：它文件夹里的所有内容都会被删除</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Re&amp;fresh</source>
        <translation>刷新(&amp;F)</translation>
    </message>
</context>
<context>
    <name>ErrorPanel</name>
    <message>
        <location filename="../../app/gui/pages/_common.py" line="+120"/>
        <source>What to do: {hint}</source>
        <translation>解决办法：{hint}</translation>
    </message>
    <message>
        <location line="+33"/>
        <source>Hide the tool&apos;s output</source>
        <translation>隐藏工具的原始输出</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Show the tool&apos;s output ({count} lines)</source>
        <translation>显示工具的原始输出（{count} 行）</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Full log: {path}</source>
        <translation>完整日志：{path}</translation>
    </message>
    <message>
        <location line="+58"/>
        <source>Open log</source>
        <translation>打开日志</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Copy path</source>
        <translation>复制路径</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open the full log in the default viewer</source>
        <translation>用默认程序打开完整日志</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Copy the log file&apos;s path</source>
        <translation>复制日志文件的路径</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The lines of the log that matter</source>
        <translation>日志中的关键几行</translation>
    </message>
</context>
<context>
    <name>InstallPage</name>
    <message>
        <location filename="../../app/gui/pages/install.py" line="+178"/>
        <source>No environment was chosen.</source>
        <translation>还没有选择环境。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Go back to the Environment page and choose where to install.</source>
        <translation>请回到“环境”页面，选择安装位置。</translation>
    </message>
    <message>
        <location line="+77"/>
        <source>{package} (package {done} of {total})</source>
        <translation>{package}（第 {done} 个，共 {total} 个包）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>{package}: {done} of {total}</source>
        <translation>{package}：{done} / {total}</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>{package}: {done}</source>
        <translation>{package}：{done}</translation>
    </message>
    <message>
        <location line="-8"/>
        <source>Unpacking and installing the packages…</source>
        <translation>正在解压并安装软件包…</translation>
    </message>
    <message>
        <location line="+103"/>
        <source>Cancelling… removing the half-made environment</source>
        <translation>正在取消…删除装了一半的环境</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Cancelled, but this folder could not be removed: {path}. You may delete it yourself.</source>
        <translation>已取消，但无法删除这个文件夹：{path}。你可以自己手动删除。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Cancelled: the environment was restored to its earlier state. You can go back and change the environment, try again, or close the assistant.</source>
        <translation>已取消：环境已恢复到之前的状态。你可以返回修改环境、重试，或关闭助手。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Cancelled: nothing was left behind. You can go back and change the environment, try again, or close the assistant.</source>
        <translation>已取消：没有留下任何东西。你可以返回修改环境、重试，或关闭助手。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Installed PyTorch {version} into {path} in {took}.</source>
        <translation>已把 PyTorch {version} 安装到 {path}，用时 {took}。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The installation failed. Nothing half-made was kept; the details are below.</source>
        <translation>安装失败。装了一半的内容没有保留；详情见下方。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Planning the installation</source>
        <translation>正在规划安装</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Recording what the environment holds now</source>
        <translation>正在记录环境当前的内容</translation>
    </message>
    <message>
        <location line="-1"/>
        <source>Checking space, permissions and the network</source>
        <translation>正在检查空间、权限和网络</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Creating the environment</source>
        <translation>正在创建环境</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Downloading packages</source>
        <translation>正在下载软件包</translation>
    </message>
    <message>
        <location line="-1"/>
        <source>Downloading and installing packages</source>
        <translation>正在下载并安装软件包</translation>
    </message>
    <message>
        <location line="-298"/>
        <source>Installing PyTorch</source>
        <extracomment>the page&apos;s title and subtitle (translated by :meth:`BasePage.titles`)</extracomment>
        <translation>正在安装 PyTorch</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The environment is created and PyTorch is downloaded and installed into it. This usually takes from under a minute to a few minutes.</source>
        <translation>正在创建环境，并把 PyTorch 下载安装进去。通常需要不到一分钟到几分钟。</translation>
    </message>
    <message>
        <location line="+299"/>
        <location line="+1"/>
        <location line="+1"/>
        <source>Checking the installed packages</source>
        <translation>正在检查已安装的软件包</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Removing the half-made environment</source>
        <translation>正在删除装了一半的环境</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cleaning up</source>
        <translation>正在清理</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Ready to install.</source>
        <translation>准备安装。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Done</source>
        <translation>完成</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Starting…</source>
        <translation>正在启动…</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Elapsed: {elapsed}</source>
        <translation>已用时间：{elapsed}</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>About {left} left</source>
        <translation>大约还剩 {left}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Estimating time left…</source>
        <translation>正在估算剩余时间…</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Cancel installation</source>
        <translation>取消安装</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cancel the installation and remove what was made</source>
        <translation>取消安装并删除已创建的内容</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Try again</source>
        <translation>重试</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Installation progress</source>
        <translation>安装进度</translation>
    </message>
    <message>
        <location line="-185"/>
        <source>Unpacking and installing the packages: {done} of about {total}</source>
        <translation>正在解包并安装软件包：已完成 {done}，共约 {total}</translation>
    </message>
    <message>
        <location line="+170"/>
        <source>{rate}/s</source>
        <translation>{rate}/秒</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{rate:.1f} packages/s</source>
        <translation>每秒 {rate:.1f} 个软件包</translation>
    </message>
</context>
<context>
    <name>LogView</name>
    <message>
        <location filename="../../app/gui/logview.py" line="+81"/>
        <source>… {n} lines not shown here (the full log has them)</source>
        <translation>… 这里没有显示 {n} 行（完整日志中都有）</translation>
    </message>
    <message>
        <location line="+52"/>
        <source>Hide details</source>
        <translation>隐藏详情</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Show details</source>
        <translation>显示详情</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Show or hide the installer&apos;s output</source>
        <translation>显示或隐藏安装程序的输出</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Installer output</source>
        <translation>安装程序输出</translation>
    </message>
</context>
<context>
    <name>MirrorChoice</name>
    <message>
        <location filename="../../app/gui/pages/environment_parts.py" line="+229"/>
        <source>Automatic: the PyTorch server, then verified mirrors</source>
        <translation>自动：先用 PyTorch 官方服务器，再用已验证的镜像</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The PyTorch server only</source>
        <translation>只用 PyTorch 官方服务器</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{mirror}, then the PyTorch server</source>
        <translation>{mirror}，然后是 PyTorch 官方服务器</translation>
    </message>
    <message>
        <location line="+72"/>
        <source>Why this version: {why}</source>
        <translation>为什么是这个版本：{why}</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Checking the mirrors…</source>
        <translation>正在检查镜像…</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>{source}: has the exact file, {speed:.1f} MB/s</source>
        <translation>{source}：有这个确切的文件，{speed:.1f} MB/s</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>{source}: {reason}</source>
        <translation>{source}：{reason}</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Verified mirrors are listed first under &quot;Download PyTorch from&quot;: each has the exact file with the PyTorch server&apos;s SHA-256. Choose one to use it; nothing changes until you do.</source>
        <translation>已验证的镜像列在“PyTorch 下载来源”的最前面：每个镜像都有这个确切的文件，且 SHA-256 与 PyTorch 官方服务器的一致。选择一个即可使用；在你选择之前不会有任何改变。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Where PyTorch comes from</source>
        <translation>PyTorch 从哪里下载</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Download PyTorch from:</source>
        <translation>PyTorch 下载来源(&amp;D)：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Download PyTorch from</source>
        <translation>PyTorch 下载来源</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Chec&amp;k the mirrors</source>
        <translation>检查镜像(&amp;K)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Ask every mirror of this build whether it has the exact file, with the same SHA-256, and how fast it answers</source>
        <translation>询问这个版本的每个镜像：是否有这个确切的文件、SHA-256 是否相同、响应有多快</translation>
    </message>
</context>
<context>
    <name>NetworkFields</name>
    <message>
        <location line="-181"/>
        <location line="+19"/>
        <source>Choose the CA certificates file</source>
        <translation>选择 CA 证书文件</translation>
    </message>
    <message>
        <location line="-18"/>
        <source>Certificates (*.pem *.crt *.cer);;All files (*)</source>
        <translation>证书 (*.pem *.crt *.cer);;所有文件 (*)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Advanced: package index, mirror and proxy</source>
        <translation>高级：软件包索引、镜像与代理</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Download the build early w&amp;hile I read these pages (never on a metered connection)</source>
        <translation>在我阅读这些页面时提前下载这个版本(&amp;H)（按流量计费的网络上从不下载）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Early downloads</source>
        <translation>提前下载</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Index URL</source>
        <translation>索引地址</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Inde&amp;x URL:</source>
        <translation>索引地址(&amp;X)：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>default: the PyTorch index for the chosen build</source>
        <translation>默认：所选版本对应的 PyTorch 索引</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Extra index URLs</source>
        <translation>额外索引地址</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Ex&amp;tra index URLs:</source>
        <translation>额外索引地址(&amp;T)：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>separated by spaces</source>
        <translation>用空格分隔</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Package mirror</source>
        <translation>软件包镜像</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Package mi&amp;rror:</source>
        <translation>软件包镜像(&amp;R)：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>replaces PyPI for the other packages, e.g. a university mirror</source>
        <translation>其他软件包改从这里下载，例如高校镜像</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Pr&amp;oxy:</source>
        <translation>代理(&amp;O)：</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Proxy</source>
        <translation>代理</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>http://proxy.example.org:3128 (default: HTTPS_PROXY)</source>
        <translation>http://proxy.example.org:3128（默认：HTTPS_PROXY）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>CA certificates file</source>
        <translation>CA 证书文件</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>CA certificate&amp;s:</source>
        <translation>CA 证书(&amp;S)：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>a .pem file, or &quot;system&quot; for this computer&apos;s certificates</source>
        <translation>一个 .pem 文件，或填 &quot;system&quot; 使用本机证书</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
</context>
<context>
    <name>PathNote</name>
    <message>
        <location filename="../../app/gui/widgets.py" line="+45"/>
        <source>No program on this computer opens folders from here. The folder is:
{path}</source>
        <translation>这台电脑上没有可以从这里打开文件夹的程序。文件夹在：
{path}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>No program on this computer opens this file from here. The file is:
{path}</source>
        <translation>这台电脑上没有可以从这里打开这个文件的程序。文件在：
{path}</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Copy path</source>
        <translation>复制路径</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Copy the path of {name}</source>
        <translation>复制 {name} 的路径</translation>
    </message>
</context>
<context>
    <name>PreflightView</name>
    <message>
        <location filename="../../app/gui/pages/environment_parts.py" line="+219"/>
        <source>Check the network, or the proxy under &quot;Advanced&quot;; choose a verified mirror under &quot;Download PyTorch from&quot; (&quot;Check the mirrors&quot;); or install from files: the wheel folder or offline bundle fields below.</source>
        <translation>请检查网络，或“高级”中的代理；在“PyTorch 下载来源”中选择一个已验证的镜像（“检查镜像”）；或者从本机文件安装：使用下方的 wheel 文件夹或离线安装包文件夹。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Check the network, or the proxy and package mirror under &quot;Advanced&quot;; or install from files: an offline bundle (fields below) needs no network at all.</source>
        <translation>请检查网络，或“高级”中的代理和软件包镜像；或者从本机文件安装：离线安装包（见下方）完全不需要网络。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Put those wheel files into the folder, or choose an offline bundle below (made by this assistant on a computer with internet).</source>
        <translation>请把这些 wheel 文件放进该文件夹，或者在下方选择一个离线安装包（由本助手在能联网的电脑上制作）。</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>Everything is ready. Press Install to create the environment and install PyTorch.</source>
        <translation>一切就绪。点击“安装”即可创建环境并安装 PyTorch。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>PyTorch cannot be downloaded from this computer now (the checks above say why). Install it from files instead: choose a folder with the PyTorch wheel files, or an offline bundle, in &quot;Install from files on this computer&quot; just below.</source>
        <translation>现在无法从这台电脑下载 PyTorch（原因见上面的检查）。请改为从文件安装：在紧挨着下方的“从本机文件安装”中，选择存放 PyTorch wheel 文件的文件夹，或者一个离线安装包。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>The mirrors are being checked meanwhile.</source>
        <translation>同时正在检查镜像。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Or choose a verified mirror under &quot;Download PyTorch from&quot;.</source>
        <translation>也可以在“PyTorch 下载来源”中选择一个已验证的镜像。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Fix the problems above (or change the choices) to go on.</source>
        <translation>请先解决上面的问题（或更改选项），然后继续。</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>About {size} will be installed.</source>
        <translation>大约需要安装 {size}。</translation>
    </message>
    <message>
        <location line="+52"/>
        <source>Choose vc_redist.x64.exe (from {url})</source>
        <translation>选择 vc_redist.x64.exe（来自 {url}）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Visual C++ runtime installer (vc_redist*.exe);;Programs (*.exe)</source>
        <translation>Visual C++ 运行库安装程序 (vc_redist*.exe);;程序 (*.exe)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Install the Visual C++ runtime</source>
        <translation>安装 Visual C++ 运行库</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The assistant will run:

{command}

Windows asks for an administrator&apos;s permission. Go on?</source>
        <translation>本助手将运行：

{command}

Windows 会请求管理员权限。要继续吗？</translation>
    </message>
    <message>
        <location line="+54"/>
        <source>Checks before installing</source>
        <translation>安装前检查</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The command that will run</source>
        <translation>将要运行的命令</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The commands the installation runs</source>
        <translation>安装时运行的命令</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Copy command</source>
        <translation>复制命令</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Copy the command to the clipboard</source>
        <translation>把命令复制到剪贴板</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Checking…</source>
        <translation>正在检查…</translation>
    </message>
</context>
<context>
    <name>PythonChoice</name>
    <message>
        <location line="+41"/>
        <source>(recommended)</source>
        <translation>（推荐）</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Python {version} (found or downloaded by uv)</source>
        <translation>Python {version}（由 uv 查找或下载）</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Your choice of Python {version} under &quot;Change…&quot; is set aside: every Python that fits the build is offered again.</source>
        <translation>你在“更改…”中选择的 Python {version} 已被搁置：所有适合这个版本的 Python 都重新列出供你选择。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Not offered: Python {versions} ({why}). To use one of them, choose its Python under &quot;Change…&quot; on the Recommendation page.</source>
        <translation>未提供：Python {versions}（{why}）。如果要用其中某个版本，请在“推荐方案”页面的“更改…”里选择它的 Python 版本。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>; </source>
        <translation>；</translation>
    </message>
</context>
<context>
    <name>QFileDialog</name>
    <message>
        <location filename="../../app/gui/i18n.py" line="+27"/>
        <source>&amp;Look in:</source>
        <extracomment>Qt&apos;s own file dialog words that Qt&apos;s Chinese catalogue (qtbase_zh_CN of Qt 6.11) lacks since they gained their shortcut letter: translated in ours (context QFileDialog; Qt asks every catalogue installed), so the dialog Browse… opens shows no English on a Chinese screen.</extracomment>
        <translation>查找范围(&amp;L)：</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Files of &amp;type:</source>
        <translation>文件类型(&amp;T)：</translation>
    </message>
</context>
<context>
    <name>RecommendationPage</name>
    <message>
        <location filename="../../app/gui/pages/recommendation.py" line="-307"/>
        <source>CUDA {version} (NVIDIA graphics card)</source>
        <translation>CUDA {version}（NVIDIA 显卡）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>ROCm {version} (AMD graphics card)</source>
        <translation>ROCm {version}（AMD 显卡）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Metal (Apple graphics)</source>
        <translation>Metal（Apple 图形处理器）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>XPU (Intel graphics card)</source>
        <translation>XPU（Intel 显卡）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the processor only (CPU)</source>
        <translation>处理器（仅 CPU）</translation>
    </message>
    <message>
        <location line="+304"/>
        <source>Recommendation</source>
        <extracomment>the page&apos;s title and subtitle (translated by :meth:`BasePage.titles`)</extracomment>
        <translation>推荐方案</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The PyTorch build for this computer, why it was chosen, and the exact command that will install it.</source>
        <translation>适合这台电脑的 PyTorch 版本、选择它的原因，以及安装它的完整命令。</translation>
    </message>
    <message>
        <location line="+196"/>
        <source>Choose which wish to give up:</source>
        <translation>请选择放弃哪一项要求：</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>No PyTorch build could be recommended: {message}</source>
        <translation>无法推荐 PyTorch 版本：{message}</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Use the recommendation</source>
        <translation>使用推荐设置</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>PyTorch {version} for {target}</source>
        <translation>PyTorch {version} — {target}</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>This is your own choice. &quot;Change…&quot; → &quot;Use the recommendation&quot; goes back to the assistant&apos;s.</source>
        <translation>这是你自己的选择。点击“更改…”→“使用推荐设置”可恢复助手的推荐。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>This is the build that fits this computer best.</source>
        <translation>这是最适合这台电脑的版本。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Also installed: {packages}.</source>
        <translation>同时安装：{packages}。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>You chose Python {version} under &quot;Change…&quot;: the new environment will use it (this assistant itself runs on Python {running}).</source>
        <translation>你在“更改…”中选择了 Python {version}：新环境将使用它（本助手自己运行在 Python {running} 上）。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>This PyTorch version does not support the Python you are running; the new environment will use Python {version}.</source>
        <translation>这个 PyTorch 版本不支持你当前的 Python；新环境将使用 Python {version}。</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Updating the NVIDIA driver to {driver} or newer would unlock {unlocks}.</source>
        <translation>把 NVIDIA 驱动更新到 {driver} 或更新版本，就能使用 {unlocks}。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Compatibility data of {date}</source>
        <translation>兼容性数据（{date}）</translation>
    </message>
    <message>
        <location line="+41"/>
        <source>Choosing the right build…</source>
        <translation>正在选择合适的版本…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>What your choices cost</source>
        <translation>你的选择带来的影响</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Why</source>
        <translation>原因</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The command</source>
        <translation>安装命令</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>These commands create the environment and install into it. The folder and the installer are set on the next page, which shows the final command.</source>
        <translation>这些命令会创建环境并安装到其中。文件夹和安装工具在下一页设置，下一页会显示最终的命令。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The install command</source>
        <translation>安装命令</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Show the command for this installer</source>
        <translation>显示这个安装工具的命令</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The same install, with uv or with pip</source>
        <translation>同样的安装，用 uv 或 pip 执行</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>C&amp;opy command</source>
        <translation>复制命令(&amp;O)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Copy the command to the clipboard</source>
        <translation>把命令复制到剪贴板</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>C&amp;hange…</source>
        <translation>更改(&amp;H)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Change the backend, build, PyTorch version, Python or packages</source>
        <translation>更改运行设备、版本类型、PyTorch 版本、Python 或软件包</translation>
    </message>
    <message>
        <location line="-79"/>
        <source>This is the newest build your sources hold, not the newest release; the reason is below.</source>
        <translation>这是你的来源中能获取的最新版本，而不是最新发布的版本；原因见下方。</translation>
    </message>
</context>
<context>
    <name>SetupWizard</name>
    <message>
        <location filename="../../app/gui/wizard.py" line="+214"/>
        <source>Getting the next steps ready…</source>
        <extracomment>The last page of each path (Welcome -&gt; ... -&gt; Done, Welcome -&gt; Environments -&gt; a task). what is left free around the window on a small screen: its frame and title bar, and a task bar the screen&apos;s available geometry does not know of</extracomment>
        <translation>正在准备后面的步骤…</translation>
    </message>
    <message>
        <location line="+81"/>
        <source>Stop the installation?</source>
        <translation>要停止安装吗？</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>PyTorch is being installed. If you close the window now, the installation is cancelled and the half-made environment is removed.

Stop and close?</source>
        <translation>正在安装 PyTorch。如果现在关闭窗口，安装会被取消，装了一半的环境也会被删除。

停止并关闭吗？</translation>
    </message>
    <message>
        <location line="+66"/>
        <location line="+6"/>
        <source>Torch Setup Assistant</source>
        <translation>Torch 安装助手</translation>
    </message>
    <message>
        <location line="-5"/>
        <source>&lt; &amp;Back</source>
        <translation>&lt; 上一步(&amp;B)</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+1"/>
        <source>&amp;Next &gt;</source>
        <translation>下一步(&amp;N) &gt;</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Finish</source>
        <translation>完成(&amp;F)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
</context>
<context>
    <name>SpeedTestPage</name>
    <message>
        <location filename="../../app/gui/pages/speedtest.py" line="+143"/>
        <source>There is no installed environment to measure.</source>
        <translation>没有可以测速的已安装环境。</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Starting PyTorch in the new environment…</source>
        <translation>正在新环境中启动 PyTorch…</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>{device} {dtype}, {size}×{size}: {gflops:.1f} GFLOP/s</source>
        <translation>{device} {dtype}，{size}×{size}：{gflops:.1f} GFLOP/s</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Measuring {dtype}, {size}×{size}…</source>
        <translation>正在测量 {dtype}，{size}×{size}…</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>Stopped.</source>
        <translation>已停止。</translation>
    </message>
    <message>
        <location line="+30"/>
        <source>No measurement finished.</source>
        <translation>没有完成任何测量。</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>The build was chosen with compatibility data {version}.</source>
        <translation>这个版本是依据兼容性数据 {version} 选定的。</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>Source: an estimate from the processor&apos;s cores, clock and SIMD width</source>
        <translation>来源：根据处理器的核心数、频率和 SIMD 宽度估算</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Run again</source>
        <translation>再运行一次</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Run the speed test</source>
        <translation>运行速度测试</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Measuring… (at most {s:.0f} s)</source>
        <translation>正在测量…（最多 {s:.0f} 秒）</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>The speed test failed. PyTorch itself was verified; you can go on.</source>
        <translation>速度测试失败了。PyTorch 本身已经通过验证，你可以继续。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The speed test is skipped.</source>
        <translation>已跳过速度测试。</translation>
    </message>
    <message>
        <location line="+6"/>
        <location line="+3"/>
        <source>The speed test was stopped.</source>
        <translation>速度测试已停止。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Skip the speed test</source>
        <translation>跳过速度测试</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Speed test progress</source>
        <translation>速度测试进度</translation>
    </message>
    <message>
        <location line="-2"/>
        <source>How the peak is estimated</source>
        <translation>峰值是怎样估算的</translation>
    </message>
    <message>
        <location line="-275"/>
        <source>Speed test</source>
        <extracomment>the page&apos;s title and subtitle (translated by :meth:`BasePage.titles`)</extracomment>
        <translation>速度测试</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Multiplies matrices of growing size to show how fast PyTorch runs here. It takes under a minute and can be skipped.</source>
        <translation>用越来越大的矩阵做乘法，看看 PyTorch 在这台电脑上跑得多快。不到一分钟，也可以跳过。</translation>
    </message>
    <message>
        <location line="+229"/>
        <source>Source: {source}</source>
        <translation>来源：{source}</translation>
    </message>
</context>
<context>
    <name>StatusRow</name>
    <message>
        <location filename="../../app/gui/widgets.py" line="-372"/>
        <source>OK</source>
        <translation>正常</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Problem</source>
        <translation>问题</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Note</source>
        <translation>提示</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Waiting</source>
        <translation>等待中</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Skipped</source>
        <translation>已跳过</translation>
    </message>
</context>
<context>
    <name>SystemPage</name>
    <message>
        <location filename="../../app/gui/pages/system.py" line="+51"/>
        <source>Your system</source>
        <extracomment>the page&apos;s title and subtitle (translated by :meth:`BasePage.titles`)</extracomment>
        <translation>你的系统</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>This is what the assistant found on this computer. Nothing has been changed.</source>
        <translation>这是助手在这台电脑上找到的信息。目前没有做任何改动。</translation>
    </message>
    <message>
        <location line="+77"/>
        <source>Saved to {path}</source>
        <translation>已保存到 {path}</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Save the system report</source>
        <translation>保存系统报告</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>JSON files (*.json)</source>
        <translation>JSON 文件 (*.json)</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Could not save: {error}</source>
        <translation>无法保存：{error}</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>{tool} did not answer in time</source>
        <translation>{tool} 没有及时响应</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The tool may be hung; its answer is missing from the report.</source>
        <translation>这个工具可能卡住了；报告中缺少它的结果。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{tool} printed something that could not be read</source>
        <translation>{tool} 输出了无法识别的内容</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>{tool} failed</source>
        <translation>{tool} 运行失败</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>{var} is set to &quot;{value}&quot;</source>
        <translation>{var} 被设置为“{value}”</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>PyTorch will not see any {vendor} graphics card while this variable is set this way.</source>
        <translation>只要这个变量这样设置，PyTorch 就看不到任何 {vendor} 显卡。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Only {free} of free disk space</source>
        <translation>磁盘剩余空间只有 {free}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>PyTorch for a graphics card needs about 5 to 10 GB; for the processor about 1 GB.</source>
        <translation>显卡版 PyTorch 大约需要 5 到 10 GB；处理器版大约需要 1 GB。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Only {mem} of memory</source>
        <translation>内存只有 {mem}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>PyTorch will work, but large models will not fit.</source>
        <translation>PyTorch 可以运行，但放不下大模型。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>NVIDIA driver {current} is too old for current PyTorch CUDA builds</source>
        <translation>NVIDIA 驱动 {current} 太旧，用不了当前的 PyTorch CUDA 版本</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Updating it to {driver} or newer would unlock {unlocks}. The assistant can still install a build that works with the driver you have.</source>
        <translation>把它更新到 {driver} 或更新版本，就能使用 {unlocks}。不更新也没关系，助手仍然可以安装一个适合你现有驱动的版本。</translation>
    </message>
    <message>
        <location line="+35"/>
        <source>Unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>(inside WSL2 on Windows)</source>
        <translation>（运行在 Windows 的 WSL2 中）</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>{mem} of graphics memory</source>
        <translation>{mem} 显存</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>driver {version}</source>
        <translation>驱动 {version}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>compute capability {cc}</source>
        <translation>计算能力 {cc}</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>built into the processor</source>
        <translation>集成在处理器中</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Looking at this computer failed: {message}</source>
        <translation>检测这台电脑时出错：{message}</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>System</source>
        <translation>系统</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>{cores} cores, {threads} threads</source>
        <translation>{cores} 核，{threads} 线程</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Processor</source>
        <translation>处理器</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Unknown processor</source>
        <translation>未知处理器</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Memory</source>
        <translation>内存</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>at {path}</source>
        <translation>位于 {path}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Free disk space</source>
        <translation>磁盘剩余空间</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>{n} more Python versions found</source>
        <translation>还找到 {n} 个其他 Python 版本</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Python</source>
        <translation>Python</translation>
    </message>
    <message>
        <location line="+5"/>
        <location line="+3"/>
        <source>Graphics card</source>
        <translation>显卡</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>None that PyTorch can use</source>
        <translation>没有 PyTorch 能用的显卡</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>PyTorch will run on the processor. That works everywhere, only slower for large models.</source>
        <translation>PyTorch 将在处理器上运行。这在任何电脑上都能用，只是跑大模型会慢一些。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>NVIDIA driver</source>
        <translation>NVIDIA 驱动</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>supports CUDA up to {version}</source>
        <translation>最高支持 CUDA {version}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>PyTorch brings its own CUDA; only the driver must be new enough.</source>
        <translation>PyTorch 自带 CUDA，只需要驱动足够新。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Nothing looks wrong.</source>
        <translation>没有发现问题。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Looking at your computer…</source>
        <translation>正在检测你的电脑…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>What was found</source>
        <translation>检测结果</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>What looks wrong</source>
        <translation>可能的问题</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Re-scan</source>
        <translation>重新检测(&amp;R)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Look at this computer again</source>
        <translation>重新检测这台电脑</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Save report…</source>
        <translation>保存报告(&amp;S)…</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Save the system report as a JSON file</source>
        <translation>把系统报告保存为 JSON 文件</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Copy report</source>
        <translation>复制报告(&amp;C)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Copy the system report (JSON) to the clipboard</source>
        <translation>把系统报告（JSON）复制到剪贴板</translation>
    </message>
</context>
<context>
    <name>VerifyPage</name>
    <message>
        <location filename="../../app/gui/pages/verify.py" line="+33"/>
        <source>Checking that PyTorch works</source>
        <extracomment>the page&apos;s title and subtitle (translated by :meth:`BasePage.titles`)</extracomment>
        <translation>检查 PyTorch 能否正常工作</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>PyTorch is imported inside the new environment and every part this computer can use is tried.</source>
        <translation>在新环境中导入 PyTorch，并逐一试用这台电脑能用的每个部分。</translation>
    </message>
    <message>
        <location line="+61"/>
        <source>There is no installed environment to verify.</source>
        <translation>没有可以验证的已安装环境。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run the installation first.</source>
        <translation>请先完成安装。</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Verification was cancelled.</source>
        <translation>验证已取消。</translation>
    </message>
    <message>
        <location line="+61"/>
        <source>Looking for the cause…</source>
        <translation>正在查找原因…</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>The diagnosis itself failed: {msg}</source>
        <translation>诊断本身出错了：{msg}</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>What went wrong and how to fix it</source>
        <translation>出了什么问题，怎么解决</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The doctor found no known cause. Save the report on the last page and share it when asking for help.</source>
        <translation>诊断没有找到已知原因。请在最后一页保存报告，求助时把它发给别人。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Fix:</source>
        <translation>解决办法：</translation>
    </message>
    <message>
        <location line="+37"/>
        <source>Checking PyTorch inside the new environment…</source>
        <translation>正在新环境中检查 PyTorch…</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>PyTorch {version} works: {passed} checks passed, {skipped} skipped.</source>
        <translation>PyTorch {version} 运行正常：{passed} 项检查通过，{skipped} 项跳过。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>{failed} of {total} checks failed.</source>
        <translation>{total} 项检查中有 {failed} 项失败。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The verification could not run.</source>
        <translation>验证无法运行。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>passed</source>
        <translation>通过</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>skipped</source>
        <translation>跳过</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>running</source>
        <translation>进行中</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Check</source>
        <translation>检查项</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Verification checklist</source>
        <translation>验证清单</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run again</source>
        <translation>再运行一次</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Diagnosis and fixes</source>
        <translation>诊断与解决办法</translation>
    </message>
</context>
<context>
    <name>WelcomePage</name>
    <message>
        <location filename="../../app/gui/pages/welcome.py" line="+38"/>
        <source>Welcome to Torch Setup Assistant</source>
        <extracomment>the page&apos;s title and subtitle (translated by :meth:`BasePage.titles`)</extracomment>
        <translation>欢迎使用 Torch 安装助手</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>This assistant installs PyTorch so that it uses your graphics card (or your processor), checks that it works, and measures its speed.</source>
        <translation>本助手会安装能用上你显卡（或处理器）的 PyTorch，检查它能否正常工作，并测量它的速度。</translation>
    </message>
    <message>
        <location line="+161"/>
        <source>You do not need to know what CUDA, ROCm or a driver is: the assistant looks at your computer, explains its choice in plain words, and lets you change it if you want to.</source>
        <translation>你不需要了解 CUDA、ROCm 或驱动是什么：助手会检测你的电脑，用通俗的话解释它的选择，你也可以随时修改。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&amp;Language:</source>
        <translation>语言(&amp;L)：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>What would you like to do?</source>
        <translation>你想做什么？</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Set up a new environment with PyTorch</source>
        <translation>建立一个装有 PyTorch 的新环境(&amp;S)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Check, repair or upgrade an existing environment</source>
        <translation>检查、修复或升级已有的环境(&amp;C)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The next page lists the PyTorch environments this assistant made and the ones it finds on this computer, with what each holds and whether it still works.</source>
        <translation>下一页列出本助手创建的 PyTorch 环境以及在这台电脑上找到的环境，显示每个环境装了什么、是否仍能正常工作。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>What will happen</source>
        <translation>接下来会做什么</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Look at your computer: system, processor, memory, graphics card and driver.</source>
        <translation>检测你的电脑：系统、处理器、内存、显卡和驱动。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>a few seconds</source>
        <translation>几秒钟</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Recommend the right PyTorch build and explain why. You can change it.</source>
        <translation>推荐合适的 PyTorch 版本并说明原因，你可以修改。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>you decide</source>
        <translation>由你决定</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Create a separate Python environment, so nothing else on your computer changes.</source>
        <translation>创建一个独立的 Python 环境，电脑上的其他东西都不会改变。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>under a minute</source>
        <translation>不到一分钟</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Download and install PyTorch: about 200 MB for the processor, 2 to 3 GB for an NVIDIA or AMD graphics card.</source>
        <translation>下载并安装 PyTorch：处理器版约 200 MB，NVIDIA 或 AMD 显卡版约 2 到 3 GB。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>1 to 15 minutes</source>
        <translation>1 到 15 分钟</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Check that PyTorch really works, then measure its speed.</source>
        <translation>检查 PyTorch 是否真的能用，再测量它的速度。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>about a minute</source>
        <translation>大约一分钟</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>It usually takes 5 to 15 minutes in all; most of it is the download. You can cancel at any time, and a half-finished installation is removed.</source>
        <translation>整个过程通常需要 5 到 15 分钟，大部分时间花在下载上。你可以随时取消，装了一半的内容会被删除。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>An offline bundle was found in {path}. PyTorch will be installed from it, without the internet.</source>
        <translation>在 {path} 找到了离线安装包。PyTorch 将从这里安装，不需要联网。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>No offline bundle was found, so PyTorch will be downloaded: keep this computer connected to the internet.</source>
        <translation>没有找到离线安装包，PyTorch 需要下载：请保持电脑联网。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Looking for an offline bundle…</source>
        <translation>正在查找离线安装包…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Nothing is installed until you confirm it on the Install page.</source>
        <translation>在“安装”页面确认之前，不会安装任何东西。</translation>
    </message>
</context>
<context>
    <name>_CommandRow</name>
    <message>
        <location filename="../../app/gui/pages/done.py" line="-200"/>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Copy the command</source>
        <translation>复制命令</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Copy: {what}</source>
        <translation>复制：{what}</translation>
    </message>
</context>
</TS>
